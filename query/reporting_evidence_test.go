package query_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/query/tracking"
)

// TestReportingChargeEvidenceGoldenBodies: issue 12's reinstall into a trial (and the other cases of
// reportingtest.ExampleChargeEvidence) through the REST API. The customer paid 33.00 GBP a month,
// uninstalled, and reinstalled onto a charge in a 14-day trial: not paying, amrCents 0, and the GBP
// block a churn (NRR 0.0) rather than a paying customer with NRR 1.0.
func TestReportingChargeEvidenceGoldenBodies(t *testing.T) {
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	key, _, err := tenant.Store.CreateAPIKey(ctx, "test", "acme", "reporting", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	fx := reportingtest.New(db.Conn, tenant.Source.WorkspaceID)
	customers := reportingtest.ExampleChargeEvidence(fx, "app-1")
	fx.Flush(t)
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	(&query.API{Keys: tenant.Store, Sources: tenant.Store, Tracking: tracking.New(db.Conn),
		Reporting: reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock)),
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)), Now: reportingtest.Clock}).Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	e := rptEnv{url: srv.URL, key: key}

	for _, tc := range []struct{ name, path string }{
		{"evidence_summary", "/api/v1/summary"},
		{"customer_india", "/api/v1/customers/india.myshopify.com?limit=3"},
		{"customer_lambda", "/api/v1/customers/" + customers["lambda"].ID() + "?limit=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := e.get(t, e.url, tc.path, e.key)
			if status != http.StatusOK {
				t.Fatalf("%d: %s", status, body)
			}
			rptGolden(t, tc.name, body)
			checkShape(t, tc.name, body)
		})
	}

	_, body, _ := e.get(t, e.url, "/api/v1/customers/india.myshopify.com", e.key)
	var india struct {
		Customer struct {
			Paying   bool
			AMRCents int64
		}
		Analytics struct {
			Paying struct {
				Paying bool
				Reason string
			}
		}
	}
	if err := json.Unmarshal(body, &india); err != nil {
		t.Fatal(err)
	}
	if india.Customer.Paying || india.Customer.AMRCents != 0 || india.Analytics.Paying.Reason != "not paying: in trial until 2026-04-06" {
		t.Fatalf("india: %s", body)
	}
}
