package query_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/query/tracking"
)

// GET /api/v1/attribution over reportingtest.ExampleAttribution (docs/METRICS.md 10.5): the golden
// body, its agreement with the OpenAPI description, and the parameter refusals.
func TestAttributionRoute(t *testing.T) {
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	s := tenant.Store
	if err := s.PutApp(ctx, "test", controlplane.App{ID: "app-2", Name: "app-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSelectedApps(ctx, "test", "acme", []string{"app-1", "app-2"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := s.CreateAPIKey(ctx, "test", "acme", "reporting", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	fx := reportingtest.New(db.Conn, tenant.Source.WorkspaceID)
	reportingtest.ExampleAttribution(fx)
	fx.Flush(t)

	gin.SetMode(gin.TestMode)
	engine := gin.New()
	(&query.API{Keys: s, Sources: s, Tracking: tracking.New(db.Conn), Reporting: reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock)),
		Log: quiet, Now: reportingtest.Clock}).Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	doc := loadDoc(t)
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}

	// get requests path, checks the answer against the description (the request too, unless it is
	// deliberately outside it) and returns the status and body.
	get := func(t *testing.T, path string, describedRequest bool) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s is not described: %v", path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
		if describedRequest {
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Fatalf("the request does not match the description: %v", err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{RequestValidationInput: in,
			Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}); err != nil {
			t.Fatalf("%s answered %d with a body the description does not allow: %v\n%s", path, resp.StatusCode, err, body)
		}
		return resp.StatusCode, body
	}

	status, body := get(t, "/api/v1/attribution?groupBy=utm_campaign", true)
	if status != http.StatusOK {
		t.Fatalf("%d: %s", status, body)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, generatedAt.ReplaceAll(body, []byte(`"generatedAt":"<generatedAt>"`)), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	testenv.Golden(t, "testdata/attribution_utm_campaign.golden.json", out.Bytes())

	for _, g := range reporting.AttributionGroups {
		if status, body := get(t, "/api/v1/attribution?currency=usd&appId=app-1&from=2026-03-02&to=2026-03-31&groupBy="+g, true); status != 200 {
			t.Fatalf("%s: %d %s", g, status, body)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/attribution", "groupBy must be one of"},
		{"/api/v1/attribution?groupBy=utm_term", "groupBy must be one of"},
		{"/api/v1/attribution?groupBy=utm_source&customerScope=all", "customerScope does not apply"},
		{"/api/v1/attribution?groupBy=utm_source&appId=app-9", "appId must be one of"},
		{"/api/v1/attribution?groupBy=utm_source&to=2026-04-01", "to must not be after today"},
		{"/api/v1/attribution?groupBy=utm_source&currency=dollars", "currency must be"},
	} {
		status, body := get(t, tc.path, false)
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"error":"invalid_parameter"`) || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s", tc.path, status, body)
		}
	}
}
