package reporting

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// datesBetween is every date of [from, to], stepping by step days.
func datesBetween(from, to string, step int) []Date {
	var out []Date
	for d := MustDate(from); !d.After(MustDate(to)); d = d.AddDays(step) {
		out = append(out, d)
	}
	return out
}

// comparable is the part of a currency block both the summary and the timeline compute.
func comparable(b CurrencyBlock) string {
	out, _ := json.Marshal([]any{b.MRRCents, b.SubscriptionMRRCents, b.UsageMRRCents, b.ARRCents, b.PayingCustomers, b.ARPUCents,
		b.NetRevenueRetentionRate, b.LargestCustomerShare, b.TopFiveCustomerShare, b.TopTenCustomerShare})
	return string(out)
}

// TestTimelineEqualsSummary is the backbone of the timeline engine: on every golden dataset
// (allDatasets: the worked examples and the state edge cases), read
// once with charge rows that carry their states and once with rows that do not (the fallback from
// the events), for each customer scope, the engine's blocks on each point equal the summary's with
// asOf = that point and the range opening the day after the previous point (so the NRR of both
// compares the same two dates). Daily points over a year (every date of the datasets' history is a
// point), and monthly ones (NRR over a month, annual plans' windows).
func TestTimelineEqualsSummary(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("rawCharges=%v", raw), func(t *testing.T) {
			e := setup(t)
			e.fx.RawCharges = raw
			all := allDatasets(e.fx)
			generated(e.fx, "app-g", 200, 1)
			e.fx.Flush(t)
			store := New(e.conn, WithClock(reportingtest.Clock))
			daily := datesBetween("2025-05-01", "2026-03-31", 1)
			monthly := []Date{}
			for _, d := range datesBetween("2025-05-01", "2026-04-30", 1) {
				if d.AddDays(1).Start().Day() == 1 || d == MustDate("2026-03-31") {
					monthly = append(monthly, d)
				}
			}
			monthly = monthly[:len(monthly)-1] // the last is 2026-04-30, after Today
			nonZero := 0
			// Every point is swept; the summary is asked for each monthly point, and for the daily
			// points of the datasets' last four months (where nearly every change is) and every
			// fifth before.
			checked := func(i int, points []Date) bool {
				return len(points) < 50 || !points[i].Before(MustDate("2025-12-01")) || i%5 == 0
			}
			cases := []struct {
				sc Scope
				cs CustomerScope
			}{{all, ScopeIncluded}, {all, ScopeExcluded}, {all, ScopeAll}, {scopeOf("app-a"), ScopeIncluded}, {scopeOf("app-e"), ScopeAll},
				{scopeOf("app-g"), ScopeIncluded}, {scopeOf("app-g"), ScopeAll}}
			for _, c := range cases {
				sc, cs := c.sc, c.cs
				for name, points := range map[string][]Date{"daily": daily, "monthly": monthly} {
					facts, err := store.loadTimeline(ctx(t), sc, points)
					if err != nil {
						t.Fatal(err)
					}
					ex, err := store.readExclusions(ctx(t), sc)
					if err != nil {
						t.Fatal(err)
					}
					got := computeTimeline(facts, ex, cs, points).blocks()
					for i := 1; i < len(points); i++ {
						if !checked(i, points) {
							continue
						}
						req := Request{Scope: sc, Range: Range{From: points[i-1].AddDays(1), To: points[i]}, CustomerScope: cs}
						sum, err := store.Summary(ctx(t), req)
						if err != nil {
							t.Fatal(err)
						}
						for _, cur := range unionKeys(sum.ByCurrency, got[i]) {
							want, have := comparable(sum.ByCurrency[cur]), comparable(got[i][cur])
							if want != have {
								t.Errorf("%v %s %s point %s %s:\n summary  %s\n timeline %s", sc.AppIDs, cs, name, points[i], cur, want, have)
							}
							if got[i][cur].MRRCents != 0 {
								nonZero++
							}
						}
					}
				}
			}
			// Not vacuous: most points of the datasets' history have money in some currency.
			if nonZero < 500 {
				t.Fatalf("only %d non-zero currency points compared", nonZero)
			}
		})
	}
}

func unionKeys[A, B any](a map[string]A, b map[string]B) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return sortedKeys(m)
}
