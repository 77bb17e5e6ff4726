package query_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestCohorts: GET /api/v1/cohorts over the golden datasets (METRICS 3.15): golden bodies and the
// refusals.
func TestCohorts(t *testing.T) {
	e := rptSetup(t)
	for _, tc := range []struct{ name, path string }{
		{"cohorts_install", "/api/v1/cohorts?from=2025-09-01&to=2026-03-31"},
		{"cohorts_first_paid_app1", "/api/v1/cohorts?by=first_paid&appId=app-1&from=2026-01-01&to=2026-03-31"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := e.get(t, e.url, tc.path, e.key)
			if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q: %s", status, h.Get("Cache-Control"), body)
			}
			rptGolden(t, tc.name, body)
		})
	}
	for _, path := range []string{"/api/v1/cohorts?by=signup", "/api/v1/cohorts?from=2026-03-05&to=2026-03-01"} {
		status, body, _ := e.get(t, e.url, path, e.key)
		var errBody struct{ Error string }
		_ = json.Unmarshal(body, &errBody)
		if status != http.StatusBadRequest || errBody.Error != "invalid_parameter" {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}
