package mcp_test

import (
	"strings"
	"testing"

	querymcp "github.com/revtrack/revtrack/query/mcp"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// get_cohorts answers the body of GET /api/v1/cohorts byte for byte on the data sets of its golden
// bodies (docs/METRICS.md 3.15: 3.7's customers in app-1, the lifecycle example in app-2 and app-3),
// and refuses what REST refuses.
func TestCohortsToolEqualsREST(t *testing.T) {
	e := goldenSetup(t, []string{"app-1", "app-2", "app-3"}, func(fx *reportingtest.Fixture) {
		reportingtest.Example37(fx, "app-1")
		reportingtest.ExampleLifecycle(fx, "app-2", "app-3")
	})
	e.check(t, []goldenCase{
		{"get_cohorts", map[string]any{}, "/api/v1/cohorts", false},
		{"get_cohorts", map[string]any{"from": "2025-09-01", "to": "2026-03-31"}, "/api/v1/cohorts?from=2025-09-01&to=2026-03-31", false},
		{"get_cohorts", map[string]any{"by": "first_paid", "appId": "app-1", "from": "2026-01-01", "to": "2026-03-31"},
			"/api/v1/cohorts?by=first_paid&appId=app-1&from=2026-01-01&to=2026-03-31", false},
		{"get_cohorts", map[string]any{"by": "first_paid", "currency": "EUR", "customerScope": "all"},
			"/api/v1/cohorts?by=first_paid&currency=EUR&customerScope=all", false},
		{"get_cohorts", map[string]any{"from": "2026-03-05", "to": "2026-03-01"}, "/api/v1/cohorts?from=2026-03-05&to=2026-03-01", true},
	})
	c, _, err := goClient(t, e.url+querymcp.Path, e.key, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"by": "signup"}, "by"},
		{map[string]any{"customerScope": "everyone"}, "customerScope"},
	} {
		if r := callGo(t, c, "get_cohorts", tc.args); !r.IsError || !strings.Contains(r.Text, tc.want) {
			t.Errorf("get_cohorts(%v): %+v, want a tool error naming %q", tc.args, r, tc.want)
		}
	}
}
