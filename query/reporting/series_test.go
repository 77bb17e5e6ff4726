package reporting

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestPeriods: the intervals of METRICS 3.13 (ISO weeks from Monday, calendar months, the first
// and last clipped) and the bound on points.
func TestPeriods(t *testing.T) {
	for _, tc := range []struct {
		from, to, interval, want string
	}{
		{"2026-03-04", "2026-03-20", IntervalWeek, "[03-04..03-08 03-09..03-15 03-16..03-20]"}, // Wednesday to Friday
		{"2026-03-09", "2026-03-15", IntervalWeek, "[03-09..03-15]"},
		{"2026-01-15", "2026-03-31", IntervalMonth, "[01-15..01-31 02-01..02-28 03-01..03-31]"},
		{"2024-02-10", "2024-03-01", IntervalMonth, "[02-10..02-29 03-01..03-01]"},
		{"2026-03-30", "2026-04-01", IntervalDay, "[03-30..03-30 03-31..03-31 04-01..04-01]"},
	} {
		ps, err := Periods(Range{From: MustDate(tc.from), To: MustDate(tc.to)}, tc.interval)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.From.String()[5:]+".."+p.To.String()[5:])
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s %s..%s: %v, want %s", tc.interval, tc.from, tc.to, got, tc.want)
		}
	}
	if ps, err := Periods(Range{From: MustDate("2025-03-30"), To: MustDate("2026-03-31")}, IntervalDay); err != nil || len(ps) != MaxSeriesPoints {
		t.Errorf("the longest range: %d points, %v", len(ps), err)
	}
	if _, err := Periods(Range{From: MustDate("2025-03-29"), To: MustDate("2026-03-31")}, IntervalDay); !errors.Is(err, ErrInvalid) {
		t.Errorf("368 points: %v", err)
	}
	for _, iv := range []string{"hour", ""} {
		if _, err := Periods(Range{From: MustDate("2026-03-01"), To: MustDate("2026-03-02")}, iv); !errors.Is(err, ErrInvalid) {
			t.Errorf("interval %q: %v", iv, err)
		}
	}
}

// TestSeriesComputesWhatItsMetricReads: a series of one metric computes only what that metric
// reads (needsOf: no concentration unless asked; the usage sales summed per currency by ClickHouse,
// in scope, unless concentration reads each customer's), yet every metric's points, their
// currencies and the series' currencies are those of the series computed in full, in every
// customer scope.
func TestSeriesComputesWhatItsMetricReads(t *testing.T) {
	e := setup(t)
	generated(e.fx, "app-g", 200, 3)
	e.fx.Flush(t)
	store := New(e.conn, WithClock(reportingtest.Clock))
	for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
		t.Run(string(cs), func(t *testing.T) { seriesComputesWhatItsMetricReads(t, store, cs) })
	}
}

func seriesComputesWhatItsMetricReads(t *testing.T, store *Store, cs CustomerScope) {
	req := Request{Scope: scopeOf("app-g"), Range: Range{From: MustDate("2025-06-01"), To: MustDate("2026-03-31")}, CustomerScope: cs}
	for _, interval := range []string{IntervalDay, IntervalMonth} {
		full, err := store.seriesResult(ctx(t), req, interval)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range Metrics {
			got, err := store.Series(ctx(t), name, interval, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Points) != len(full.periods) {
				t.Fatalf("%s %s: %d points, want %d", name, interval, len(got.Points), len(full.periods))
			}
			currencies := map[string]bool{}
			for i := range full.periods {
				want := focus(name, full.pointSummary(store, req, i, store.now()))
				for cur := range want.ByCurrency {
					currencies[cur] = true
				}
				for cur, w := range want.ByCurrency {
					wj, _ := json.Marshal(w)
					hj, _ := json.Marshal(got.Points[i].ByCurrency[cur])
					if string(wj) != string(hj) {
						t.Errorf("%s %s %s %s: %s, want %s", name, interval, full.periods[i], cur, hj, wj)
					}
				}
			}
			if fmt.Sprint(sortedKeys(currencies)) != fmt.Sprint(got.Currencies) {
				t.Errorf("%s %s: currencies %v, want %v", name, interval, got.Currencies, sortedKeys(currencies))
			}
		}
	}
}
