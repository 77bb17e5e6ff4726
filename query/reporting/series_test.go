package reporting

import (
	"errors"
	"fmt"
	"testing"
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
