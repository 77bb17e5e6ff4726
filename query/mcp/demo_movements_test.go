package mcp_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

// testDemoMovements checks docs/METRICS.md 3.13–3.14 on the demo data set synced through the real
// sync, Kafka and processors (startStack: charge states derived by the processors, not written by a
// fixture): over 90 days, daily, every movement reconciles (end = start + new + expansion +
// reactivation − contraction − churn, each day opening at the previous close), the series' and the
// movements' subscription MRR agree on every day, and both equal the summary on every tenth day and
// the last; then the same monthly.
func testDemoMovements(t *testing.T, st stack) {
	today := time.Now().UTC()
	day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
	get := func(path string, v any) {
		t.Helper()
		status, body := st.rest(t, path, st.apiKey)
		if status != 200 || json.Unmarshal(body, v) != nil {
			t.Fatalf("%s: %d %s", path, status, body)
		}
	}
	type block struct {
		StartMRRCents, EndMRRCents, NewCents, ExpansionCents, ContractionCents, ChurnCents, ReactivationCents int64
		NewCustomers, ExpansionCustomers, ContractionCustomers, ChurnedCustomers, ReactivatedCustomers        int64
	}
	moved := int64(0)
	for _, interval := range []string{"day", "month"} {
		rng := url.Values{"from": {day(-89)}, "to": {day(0)}, "interval": {interval}}
		var m struct {
			Periods []struct {
				Date       string
				ByCurrency map[string]block
			}
		}
		get("/api/v1/mrr-movements?"+rng.Encode(), &m)
		var s struct {
			Points []struct {
				Date       string
				ByCurrency map[string]struct{ SubscriptionMRRCents int64 }
			}
		}
		get("/api/v1/metrics/mrr?"+rng.Encode(), &s)
		if len(m.Periods) == 0 || len(m.Periods) != len(s.Points) {
			t.Fatalf("%s: %d periods, %d points", interval, len(m.Periods), len(s.Points))
		}
		for i, p := range m.Periods {
			for cur, b := range p.ByCurrency {
				if b.EndMRRCents != b.StartMRRCents+b.NewCents+b.ExpansionCents+b.ReactivationCents-b.ContractionCents-b.ChurnCents {
					t.Errorf("%s %s %s: does not reconcile: %+v", interval, p.Date, cur, b)
				}
				if i > 0 && b.StartMRRCents != m.Periods[i-1].ByCurrency[cur].EndMRRCents {
					t.Errorf("%s %s %s: opens at %d, the previous period closed at %d", interval, p.Date, cur, b.StartMRRCents,
						m.Periods[i-1].ByCurrency[cur].EndMRRCents)
				}
				if got := s.Points[i].ByCurrency[cur].SubscriptionMRRCents; got != b.EndMRRCents {
					t.Errorf("%s %s %s: series %d, movements close at %d", interval, p.Date, cur, got, b.EndMRRCents)
				}
				moved += b.NewCustomers + b.ExpansionCustomers + b.ContractionCustomers + b.ChurnedCustomers + b.ReactivatedCustomers
			}
			if (interval == "day" && i%10 == 9) || i == len(m.Periods)-1 {
				var sum struct {
					ByCurrency map[string]struct{ SubscriptionMRRCents int64 }
				}
				get("/api/v1/summary?"+url.Values{"from": {p.Date}, "to": {p.Date}}.Encode(), &sum)
				for cur, b := range sum.ByCurrency {
					if b.SubscriptionMRRCents != p.ByCurrency[cur].EndMRRCents {
						t.Errorf("%s %s %s: summary %d, movements close at %d", interval, p.Date, cur, b.SubscriptionMRRCents,
							p.ByCurrency[cur].EndMRRCents)
					}
				}
			}
		}
	}
	if moved == 0 {
		t.Fatal("the demo data moved no customer in 90 days")
	}
	t.Logf("%d customer movements over 90 days, daily and monthly", moved)
}
