package reporting

import (
	"fmt"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// checkMovements asserts the invariants of METRICS 3.14 on a movements answer: per period and
// currency, end = start + new + expansion + reactivation − contraction − churn to the cent, each
// period opens where the previous closed, and start and end are the subscription MRR the series
// (so the summary, TestTimelineEqualsSummary) gives on those dates.
func checkMovements(t *testing.T, what string, m Movements, series []map[string]CurrencyBlock) (moved int) {
	t.Helper()
	for i, p := range m.Periods {
		for cur, b := range p.ByCurrency {
			if b.EndMRRCents != b.StartMRRCents+b.NewCents+b.ExpansionCents+b.ReactivationCents-b.ContractionCents-b.ChurnCents ||
				b.NetCents != b.EndMRRCents-b.StartMRRCents {
				t.Errorf("%s %s %s: invariant broken: %+v", what, p.Date, cur, b)
			}
			if b.StartMRRCents != series[i][cur].SubscriptionMRRCents || b.EndMRRCents != series[i+1][cur].SubscriptionMRRCents {
				t.Errorf("%s %s %s: start %d end %d, series %d → %d", what, p.Date, cur, b.StartMRRCents, b.EndMRRCents,
					series[i][cur].SubscriptionMRRCents, series[i+1][cur].SubscriptionMRRCents)
			}
			if i > 0 && b.StartMRRCents != m.Periods[i-1].ByCurrency[cur].EndMRRCents {
				t.Errorf("%s %s %s: opens at %d, the previous period closed at %d", what, p.Date, cur, b.StartMRRCents,
					m.Periods[i-1].ByCurrency[cur].EndMRRCents)
			}
			moved += int(b.NewCustomers + b.ExpansionCustomers + b.ContractionCustomers + b.ChurnedCustomers + b.ReactivatedCustomers)
		}
	}
	return moved
}

// TestMovementInvariants checks the invariants on every golden dataset and on generated data of
// several seeds, for every interval and customer scope, and that the customers listed behind each
// movement (every page) add up to it.
func TestMovementInvariants(t *testing.T) {
	e := setup(t)
	all := allDatasets(e.fx)
	seeds := []uint64{1, 2, 3}
	for _, seed := range seeds {
		generated(e.fx, fmt.Sprintf("gen-%d", seed), 120, seed)
	}
	e.fx.Flush(t)
	store := New(e.conn, WithClock(reportingtest.Clock))
	scopes := []Scope{all}
	for _, seed := range seeds {
		scopes = append(scopes, scopeOf(fmt.Sprintf("gen-%d", seed)))
	}
	rng := Range{From: MustDate("2025-04-01"), To: MustDate("2026-03-31")}
	moved := map[string]int{}
	for _, sc := range scopes {
		for _, cs := range []CustomerScope{ScopeIncluded, ScopeAll} {
			for _, interval := range []string{IntervalDay, IntervalWeek, IntervalMonth} {
				req := MovementsRequest{Request: Request{Scope: sc, Range: rng, CustomerScope: cs}, Interval: interval}
				m, err := store.Movements(ctx(t), req)
				if err != nil {
					t.Fatal(err)
				}
				periods, _ := Periods(rng, interval)
				points := seriesPoints(rng, periods)
				facts, err := store.loadTimeline(ctx(t), sc, points, usageByCustomer)
				if err != nil {
					t.Fatal(err)
				}
				ex, _ := store.readExclusions(ctx(t), sc)
				what := fmt.Sprintf("%v %s %s", sc.AppIDs, cs, interval)
				n := checkMovements(t, what, m, computeTimeline(facts, ex, cs, points, nil).blocks())
				moved[interval] += n
				if interval == IntervalMonth {
					for _, p := range m.Periods {
						checkMovementCustomers(t, store, req, p)
					}
				}
			}
		}
	}
	for _, interval := range []string{IntervalDay, IntervalWeek, IntervalMonth} {
		if moved[interval] < 300 { // not vacuous: the data moves a lot
			t.Errorf("%s: only %d customer movements", interval, moved[interval])
		}
	}
}

// checkMovementCustomers pages through the customers behind each movement of a period (3 a page)
// and checks that they add up to the period's block.
func checkMovementCustomers(t *testing.T, store *Store, req MovementsRequest, p MovementPeriod) {
	t.Helper()
	for _, typ := range MovementTypes {
		sums, counts := map[string]int64{}, map[string]int64{}
		cursor := ""
		for {
			page, err := store.MovementCustomers(ctx(t), MovementCustomersRequest{MovementsRequest: req, Type: typ, Period: p.Date,
				Cursor: cursor, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page.Customers {
				if c.ID <= cursor {
					t.Fatalf("page after %s lists %s", cursor, c.ID)
				}
				sums[c.Currency] += c.MovementCents
				counts[c.Currency]++
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		for cur, b := range p.ByCurrency {
			want := map[string][2]int64{MoveNew: {b.NewCents, b.NewCustomers}, MoveExpansion: {b.ExpansionCents, b.ExpansionCustomers},
				MoveContraction: {-b.ContractionCents, b.ContractionCustomers}, MoveChurn: {-b.ChurnCents, b.ChurnedCustomers},
				MoveReactivation: {b.ReactivationCents, b.ReactivatedCustomers}}[typ]
			if sums[cur] != want[0] || counts[cur] != want[1] {
				t.Errorf("%v %s %s %s: customers add up to %d cents, %d customers; block %v", req.Scope.AppIDs, p.Date, cur, typ,
					sums[cur], counts[cur], want)
			}
		}
	}
}

// TestMovementExamples are the worked examples of METRICS 3.14, by hand.
func TestMovementExamples(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleNRR(e.fx, "app-n")
	cs := reportingtest.ExampleLifecycle(e.fx, "app-a", "app-b")
	e.fx.Flush(t)
	// 3.8's customers over March: kilo contraction 2,000, mike churn 2,900 (frozen), november
	// expansion 3,000, oscar new 3,900: 17,950 + 3,900 + 3,000 − 2,000 − 2,900 = 19,950.
	m, err := e.store.Movements(ctx(t), MovementsRequest{Request: Request{Scope: scopeOf("app-n"), CustomerScope: ScopeIncluded,
		Range: Range{From: MustDate("2026-03-01"), To: MustDate("2026-03-31")}}, Interval: IntervalMonth})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "March USD", m.Periods[0].ByCurrency["USD"], MovementBlock{StartMRRCents: 17950, EndMRRCents: 19950, NewCents: 3900,
		ExpansionCents: 3000, ContractionCents: 2000, ChurnCents: 2900, NetCents: 2000, NewCustomers: 1, ExpansionCustomers: 1,
		ContractionCustomers: 1, ChurnedCustomers: 1})
	// papa, daily: churn on 03-10 (its uninstall ends its charge), reactivation on 03-15 (a new
	// charge paid that day; papa had paid before); quebec churns on 03-05.
	day := MovementsRequest{Request: Request{Scope: scopeOf("app-a"), CustomerScope: ScopeIncluded, Range: defaultRange}, Interval: IntervalDay}
	for _, tc := range []struct {
		typ, period, who string
		cents            int64
	}{
		{MoveChurn, "2026-03-10", "papa", -2900},
		{MoveReactivation, "2026-03-15", "papa", 1900},
		{MoveChurn, "2026-03-05", "quebec", -4900},
	} {
		page, err := e.store.MovementCustomers(ctx(t), MovementCustomersRequest{MovementsRequest: day, Type: tc.typ, Period: MustDate(tc.period)})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Customers) != 1 || page.Customers[0].ID != cs[tc.who].ID() || page.Customers[0].MovementCents != tc.cents ||
			page.Customers[0].Domain != tc.who+".myshopify.com" {
			t.Errorf("%s on %s: %+v", tc.typ, tc.period, page.Customers)
		}
	}
	// Monthly, papa's churn and return inside March is one contraction: 2,900 → 1,900.
	month := day
	month.Interval = IntervalMonth
	page, err := e.store.MovementCustomers(ctx(t), MovementCustomersRequest{MovementsRequest: month, Type: MoveContraction, Period: MustDate("2026-03-31")})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Customers) != 1 || page.Customers[0].ID != cs["papa"].ID() || page.Customers[0].MovementCents != -1000 {
		t.Errorf("monthly contraction: %+v", page.Customers)
	}
}
