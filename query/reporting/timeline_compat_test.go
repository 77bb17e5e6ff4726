package reporting

import (
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// timelineSQL are the query constants of timeline_sql.go; each must be sent by the test below.
var timelineSQL = map[string]string{
	"selectTimelineFallback": selectTimelineFallback,
	"selectTimelineUsage":    selectTimelineUsage,
	"selectFirstPayments":    selectFirstPayments, "observedByDayHead": observedByDayHead, "observedByDayTail": observedByDayTail,
	"selectCohortInstalls": selectCohortInstalls, "selectTimelineUsageTotals": selectTimelineUsageTotals,
	"timelineUsageTotalsTail": timelineUsageTotalsTail, "observedCurrenciesByDayHead": observedCurrenciesByDayHead,
	"observedOtherCurrencies": observedOtherCurrencies,
}

// TestTimelineQueriesRunOnCurrentClickHouse is TestQueriesRunOnCurrentClickHouse for the timeline
// engine's queries (a series, movements and the customers behind one, cohorts): sent on ClickHouse 18.16 (charge rows without their states, so the fallback is
// read too), then run as sent on the current engine.
func TestTimelineQueriesRunOnCurrentClickHouse(t *testing.T) {
	e := setup(t)
	e.fx.RawCharges = true
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	req := MovementsRequest{Request: Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}, Interval: IntervalWeek}
	// Usage per currency and observed usage's currencies only; per customer; observed usage's sums.
	for _, m := range []string{MetricMRR, MetricCustomerConcentration, MetricUsage} {
		if _, err := e.store.Series(ctx(t), m, IntervalWeek, req.Request); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.Movements(ctx(t), req); err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{CohortByInstall, CohortByFirstPaid} {
		if _, err := e.store.Cohorts(ctx(t), CohortsRequest{Request: req.Request, By: by}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.MovementCustomers(ctx(t), MovementCustomersRequest{MovementsRequest: req, Type: MoveChurn, Period: MustDate("2026-03-20")}); err != nil {
		t.Fatal(err)
	}
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements, sampleRows...)
	sent := map[string]bool{}
	for _, q := range slices.Sorted(mapKeys(e.rec.queries)) { // every query sent, as sent (the compositions too)
		statements = append(statements, inline(t, q, e.rec.queries[q]...))
		for name, c := range timelineSQL {
			if strings.Contains(q, c) {
				sent[name] = true
			}
		}
	}
	for name := range timelineSQL {
		if !sent[name] {
			t.Errorf("%s was never sent", name)
		}
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
