package reporting

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestTimelineEqualsSummary is the backbone of the timeline engine: on every golden dataset
// (allDatasets: the worked examples and the state edge cases), read
// once with charge rows that carry their states and once with rows that do not (the fallback from
// the events), for each customer scope, the engine's blocks on each point equal the summary's with
// asOf = that point and the range opening the day after the previous point (so the NRR of both
// compares the same two dates, and billed and observed usage sum the same dates): the whole block,
// every field, and the same currencies. Daily points over most of a year (every date of the
// datasets' history is a point), and monthly ones (NRR over a month, annual plans' windows).
func TestTimelineEqualsSummary(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("rawCharges=%v", raw), func(t *testing.T) {
			e := setup(t)
			e.fx.RawCharges = raw
			all := allDatasets(e.fx)
			generated(e.fx, "app-g", 200, 1)
			e.fx.Flush(t)
			store := New(e.conn, WithClock(reportingtest.Clock))
			nonZero := 0
			// Every interval is computed; the summary is asked for each monthly one, and for the
			// daily ones of the datasets' last four months (where nearly every change is) and every
			// fifth before.
			checked := func(i int, p Range) bool {
				return !p.From.Before(MustDate("2025-12-01")) || i%5 == 0 || p.From != p.To
			}
			cases := []struct {
				sc Scope
				cs CustomerScope
			}{{all, ScopeIncluded}, {all, ScopeExcluded}, {all, ScopeAll}, {scopeOf("app-a"), ScopeIncluded}, {scopeOf("app-e"), ScopeAll},
				{scopeOf("app-g"), ScopeIncluded}, {scopeOf("app-g"), ScopeAll}}
			for _, c := range cases {
				for _, interval := range []string{IntervalDay, IntervalMonth} {
					req := Request{Scope: c.sc, Range: Range{From: MustDate("2025-05-02"), To: MustDate("2026-03-31")}, CustomerScope: c.cs}
					r, err := store.seriesResult(ctx(t), req, interval)
					if err != nil {
						t.Fatal(err)
					}
					for i, p := range r.periods {
						if !checked(i, p) {
							continue
						}
						sum, err := store.Summary(ctx(t), Request{Scope: c.sc, Range: p, CustomerScope: c.cs})
						if err != nil {
							t.Fatal(err)
						}
						want, have := sortedKeys(sum.ByCurrency), sortedKeys(r.blocks[i])
						if fmt.Sprint(want) != fmt.Sprint(have) {
							t.Errorf("%v %s %s: currencies %v, summary %v", c.sc.AppIDs, c.cs, p, have, want)
						}
						for _, cur := range unionKeys(sum.ByCurrency, r.blocks[i]) {
							w, _ := json.Marshal(sum.ByCurrency[cur])
							h, _ := json.Marshal(r.blocks[i][cur])
							if string(w) != string(h) {
								t.Errorf("%v %s %s %s:\n summary  %s\n timeline %s", c.sc.AppIDs, c.cs, p, cur, w, h)
							}
							if r.blocks[i][cur].MRRCents != 0 {
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

// TestAssembleTimelineUsageInTwoCurrencies: a customer's usage rows in two currencies, interleaved
// as ClickHouse may send them, all land in their currency (a pointer to the first currency's entry
// once went stale when the second one moved the slice).
func TestAssembleTimelineUsageInTwoCurrencies(t *testing.T) {
	var k customerHash
	k[0] = 1
	rows := []tlUsageRow{{customer: k, currency: "USD", day: 1, gross: 100, net: 80, count: 1}, {customer: k, currency: "EUR", day: 1, gross: 50, net: 40, count: 1},
		{customer: k, currency: "USD", day: 2, gross: 200, net: 160, count: 2}, {customer: k, currency: "EUR", day: 3, gross: 70, net: 60, count: 1}}
	f := assembleTimeline(nil, nil, nil, rows)
	got := map[string][]int64{}
	for _, u := range f.get(k).usage {
		got[u.currency] = u.gross
	}
	if len(got) != 2 || !slices.Equal(got["USD"], []int64{100, 200}) || !slices.Equal(got["EUR"], []int64{50, 70}) {
		t.Fatalf("usage per currency %v, want USD [100 200] and EUR [50 70]", got)
	}
}
