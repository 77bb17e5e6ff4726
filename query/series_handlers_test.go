package query_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestMetricSeries: GET /api/v1/metrics/{metric}?interval=… over the golden datasets (METRICS
// 3.13): golden bodies, the hand-computed points of METRICS 3.7 and 3.13's worked example, and the
// refusals.
func TestMetricSeries(t *testing.T) {
	e := rptSetup(t)
	for _, tc := range []struct{ name, path string }{
		{"series_mrr_week", "/api/v1/metrics/mrr?appId=app-1&interval=week&from=2026-03-02&to=2026-03-31"},
		{"series_nrr_month", "/api/v1/metrics/net-revenue-retention?interval=month&from=2026-01-15&to=2026-03-31"},
		{"series_concentration_day", "/api/v1/metrics/customer-concentration?appId=app-1&customerScope=all&interval=day&from=2026-03-25&to=2026-03-31"},
		{"series_usage_week", "/api/v1/metrics/usage?appId=app-1&interval=week&from=2026-03-02&to=2026-03-31"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := e.get(t, e.url, tc.path, e.key)
			if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q: %s", status, h.Get("Cache-Control"), body)
			}
			rptGolden(t, tc.name, body)
		})
	}

	// The last point of a weekly series is the summary's asOf (METRICS 3.7: USD 17,350), the weeks
	// are ISO weeks clipped to the range.
	_, body, _ := e.get(t, e.url, "/api/v1/metrics/mrr?appId=app-1&interval=week&from=2026-03-02&to=2026-03-31", e.key)
	var s struct {
		Interval string
		Points   []struct {
			Date, PeriodFrom string
			ByCurrency       map[string]struct{ MRRCents, SubscriptionMRRCents, UsageMRRCents int64 }
		}
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	var dates []string
	for _, p := range s.Points {
		dates = append(dates, p.PeriodFrom+".."+p.Date)
	}
	want := []string{"2026-03-02..2026-03-08", "2026-03-09..2026-03-15", "2026-03-16..2026-03-22", "2026-03-23..2026-03-29", "2026-03-30..2026-03-31"}
	if len(dates) != len(want) {
		t.Fatalf("periods %v", dates)
	}
	for i := range want {
		if dates[i] != want[i] {
			t.Fatalf("periods %v, want %v", dates, want)
		}
	}
	last := s.Points[len(s.Points)-1].ByCurrency["USD"]
	if last.MRRCents != 17350 || last.SubscriptionMRRCents != 13150 || last.UsageMRRCents != 4200 {
		t.Fatalf("last point USD %+v", last)
	}

	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/api/v1/metrics/mrr?interval=hour", http.StatusBadRequest, "invalid_parameter"},
		{"/api/v1/metrics/mrr?interval=day&from=2025-03-29&to=2026-03-31", http.StatusBadRequest, "invalid_parameter"}, // 368 points: beyond the longest range
		{"/api/v1/metrics/nope?interval=day", http.StatusNotFound, "not_found"},
		{"/api/v1/metrics/mrr?interval=day&to=2026-04-01", http.StatusBadRequest, "invalid_parameter"},
	} {
		status, body, _ := e.get(t, e.url, tc.path, e.key)
		var errBody struct{ Error string }
		_ = json.Unmarshal(body, &errBody)
		if status != tc.status || errBody.Error != tc.code {
			t.Errorf("%s: %d %s", tc.path, status, body)
		}
	}
	// An empty interval is its absence (docs/API.md): the one-point body.
	status, body, _ := e.get(t, e.url, "/api/v1/metrics/mrr?appId=app-1&interval=", e.key)
	_, plain, _ := e.get(t, e.url, "/api/v1/metrics/mrr?appId=app-1", e.key)
	if status != http.StatusOK || bytesHavePoints(body) || string(generatedAt.ReplaceAll(body, nil)) != string(generatedAt.ReplaceAll(plain, nil)) {
		t.Errorf("empty interval: %d %s", status, body)
	}
	// The longest range the API takes (to 366 days after from) answers daily: 367 points.
	if status, body, _ := e.get(t, e.url, "/api/v1/metrics/mrr?interval=day&from=2025-03-30&to=2026-03-31", e.key); status != http.StatusOK {
		t.Errorf("367 points: %d %s", status, body)
	}
}

// bytesHavePoints says whether a body is a series (it has points).
func bytesHavePoints(body []byte) bool {
	var v struct{ Points []any }
	return json.Unmarshal(body, &v) == nil && v.Points != nil
}
