package reporting

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestExportEqualsTheSeries: on generated data (plan changes, freezes, lapsed evidence, annual
// plans, trials, a currency switch, usage, excluded shops) the export's spans, expanded into days,
// add up to the daily MRR series and its movements to the daily movements, day by day, per
// currency, for the included customers and for all. processors/analystmrr checks the same through
// the stored views on the golden datasets.
func TestExportEqualsTheSeries(t *testing.T) {
	e := setup(t)
	for _, seed := range []uint64{11, 12} {
		generated(e.fx, fmt.Sprintf("gen-x%d", seed), 150, seed)
	}
	e.fx.Flush(t)
	store := New(e.conn, WithClock(reportingtest.Clock), WithResultCache(0))
	rng := Range{From: MustDate("2025-04-01"), To: MustDate("2026-03-31")}
	for _, seed := range []uint64{11, 12} {
		sc := scopeOf(fmt.Sprintf("gen-x%d", seed))
		type key struct{ day, cur string }
		mrr := map[CustomerScope]map[key]MRRBlock{ScopeIncluded: {}, ScopeAll: {}}
		moves := map[CustomerScope]map[key]MovementBlock{ScopeIncluded: {}, ScopeAll: {}}
		spans := 0
		_, err := store.ExportCustomerMRR(ctx(t), sc, rng.To, func(c CustomerMRR) error {
			for _, cs := range []CustomerScope{ScopeIncluded, ScopeAll} {
				if !cs.admits(c.Excluded) {
					continue
				}
				for _, s := range c.Spans {
					spans++
					for d := s.From; !d.After(s.To); d = d.AddDays(1) {
						if d.Before(rng.From) || d.After(rng.To) {
							continue
						}
						k := key{d.String(), s.Currency}
						b := mrr[cs][k]
						b.MRRCents, b.SubscriptionMRRCents, b.UsageMRRCents = b.MRRCents+s.MRRCents,
							b.SubscriptionMRRCents+s.SubscriptionMRRCents, b.UsageMRRCents+s.UsageMRRCents
						mrr[cs][k] = b
					}
				}
				for _, m := range c.Movements {
					if m.Date.Before(rng.From) {
						continue
					}
					k := key{m.Date.String(), m.Currency}
					b := moves[cs][k]
					b.add(customerMove{kind: m.Kind, start: m.StartCents, end: m.EndCents})
					moves[cs][k] = b
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range []CustomerScope{ScopeIncluded, ScopeAll} {
			req := Request{Scope: sc, Range: rng, CustomerScope: cs}
			series, err := store.Series(ctx(t), MetricMRR, IntervalDay, req)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, p := range series.Points {
				for cur, v := range p.ByCurrency {
					if got, want := mrr[cs][key{p.Date.String(), cur}], v.(MRRBlock); got != want {
						t.Errorf("seed %d %s %s %s: export %+v, series %+v", seed, cs, p.Date, cur, got, want)
					}
					delete(mrr[cs], key{p.Date.String(), cur})
					n++
				}
			}
			if len(mrr[cs]) > 0 {
				t.Errorf("seed %d %s: the export has MRR the series has not: %v", seed, cs, mrr[cs])
			}
			m, err := store.Movements(ctx(t), MovementsRequest{Request: req, Interval: IntervalDay})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Periods {
				for cur, want := range p.ByCurrency {
					got := moves[cs][key{p.Date.String(), cur}]
					// The export's blocks hold only the movers' start and end; compare the movements.
					got.StartMRRCents, got.EndMRRCents, got.NetCents = want.StartMRRCents, want.EndMRRCents, want.NetCents
					if got != want {
						t.Errorf("seed %d %s %s %s: export %+v, API %+v", seed, cs, p.Date, cur, got, want)
					}
					delete(moves[cs], key{p.Date.String(), cur})
				}
			}
			for k, b := range moves[cs] {
				if b != (MovementBlock{}) {
					t.Errorf("seed %d %s %v: the export has movements the API has not: %+v", seed, cs, k, b)
				}
			}
			if n < 300 {
				t.Errorf("seed %d %s: only %d day-currencies compared", seed, cs, n)
			}
		}
		if spans == 0 {
			t.Errorf("seed %d: no span", seed)
		}
	}
}

// BenchmarkExportCustomerMRR times one export of an app's whole history (generated data from
// 2025-03-01, TIMELINE_BENCH_N customers, default 3,000) and reports spans and movements per
// customer: what processors/analystmrr computes and writes per recomputed app.
func BenchmarkExportCustomerMRR(b *testing.B) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("TIMELINE_BENCH_N")); err == nil {
		n = v
	}
	db := pipeline.Migrated(b).Conn
	fx := reportingtest.New(db, "ws")
	generated(fx, "app-g", n, 7)
	if err := fx.FlushContext(b.Context()); err != nil {
		b.Fatal(err)
	}
	s := New(db, WithClock(reportingtest.Clock), WithResultCache(0))
	var spans, moves, customers int
	for b.Loop() {
		spans, moves = 0, 0
		x, err := s.ExportCustomerMRR(b.Context(), scopeOf("app-g"), DateOf(reportingtest.Today), func(c CustomerMRR) error {
			spans, moves = spans+len(c.Spans), moves+len(c.Movements)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		customers = x.Customers
	}
	b.ReportMetric(float64(spans)/float64(max(customers, 1)), "spans/customer")
	b.ReportMetric(float64(moves)/float64(max(customers, 1)), "movements/customer")
	b.ReportMetric(float64(customers), "customers")
}
