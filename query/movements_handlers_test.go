package query_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestMRRMovements: GET /api/v1/mrr-movements and /mrr-movements/customers over the golden
// datasets (METRICS 3.14): golden bodies, the invariant through HTTP, and the refusals.
func TestMRRMovements(t *testing.T) {
	e := rptSetup(t)
	for _, tc := range []struct{ name, path string }{
		{"mrr_movements_week", "/api/v1/mrr-movements?interval=week"},
		{"mrr_movements_month_app1", "/api/v1/mrr-movements?appId=app-1&customerScope=all&from=2026-01-01&to=2026-03-31"},
		{"mrr_movement_customers_churn", "/api/v1/mrr-movements/customers?interval=day&type=churn&period=2026-03-10"},
		{"mrr_movement_customers_reactivation", "/api/v1/mrr-movements/customers?interval=day&type=reactivation&period=2026-03-15"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := e.get(t, e.url, tc.path, e.key)
			if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q: %s", status, h.Get("Cache-Control"), body)
			}
			rptGolden(t, tc.name, body)
		})
	}

	// The invariant, through HTTP, on every daily period of the default range.
	_, body, _ := e.get(t, e.url, "/api/v1/mrr-movements?interval=day", e.key)
	var m struct {
		Periods []struct {
			Date       string
			ByCurrency map[string]struct {
				StartMRRCents, EndMRRCents, NewCents, ExpansionCents, ContractionCents, ChurnCents, ReactivationCents int64
			}
		}
	}
	if err := json.Unmarshal(body, &m); err != nil || len(m.Periods) != 30 {
		t.Fatalf("%v: %s", err, body)
	}
	for _, p := range m.Periods {
		for cur, b := range p.ByCurrency {
			if b.EndMRRCents != b.StartMRRCents+b.NewCents+b.ExpansionCents+b.ReactivationCents-b.ContractionCents-b.ChurnCents {
				t.Errorf("%s %s: %+v", p.Date, cur, b)
			}
		}
	}

	for _, path := range []string{
		"/api/v1/mrr-movements?interval=hour",
		"/api/v1/mrr-movements?customerScope=everyone",
		"/api/v1/mrr-movements/customers?period=2026-03-10",
		"/api/v1/mrr-movements/customers?type=churn",
		"/api/v1/mrr-movements/customers?type=lost&period=2026-03-10",
		"/api/v1/mrr-movements/customers?type=churn&period=2026-02-10",
		"/api/v1/mrr-movements/customers?type=churn&period=2026-03-10&cursor=x",
		"/api/v1/mrr-movements/customers?type=churn&period=2026-03-10&limit=201",
	} {
		status, body, _ := e.get(t, e.url, path, e.key)
		var errBody struct{ Error string }
		_ = json.Unmarshal(body, &errBody)
		if status != http.StatusBadRequest || errBody.Error != "invalid_parameter" {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}
