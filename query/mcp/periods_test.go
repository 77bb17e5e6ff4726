package mcp

import (
	"reflect"
	"testing"
	"time"
)

func date(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }

func TestSplitPeriods(t *testing.T) {
	cases := []struct {
		from, to, interval string
		want               []period
	}{
		{"2026-03-02", "2026-03-04", intervalDay, []period{{"2026-03-02", "2026-03-02"}, {"2026-03-03", "2026-03-03"}, {"2026-03-04", "2026-03-04"}}},
		// 2026-03-04 is a Wednesday: the first week is clipped to Wednesday–Sunday.
		{"2026-03-04", "2026-03-17", intervalWeek, []period{{"2026-03-04", "2026-03-08"}, {"2026-03-09", "2026-03-15"}, {"2026-03-16", "2026-03-17"}}},
		{"2026-03-09", "2026-03-15", intervalWeek, []period{{"2026-03-09", "2026-03-15"}}},
		{"2026-03-15", "2026-03-16", intervalWeek, []period{{"2026-03-15", "2026-03-15"}, {"2026-03-16", "2026-03-16"}}},
		{"2026-01-31", "2026-03-01", intervalMonth, []period{{"2026-01-31", "2026-01-31"}, {"2026-02-01", "2026-02-28"}, {"2026-03-01", "2026-03-01"}}},
		{"2025-12-15", "2026-01-10", intervalMonth, []period{{"2025-12-15", "2025-12-31"}, {"2026-01-01", "2026-01-10"}}},
		{"2026-03-02", "2026-03-31", intervalNone, []period{{"2026-03-02", "2026-03-31"}}},
	}
	for _, c := range cases {
		got := splitPeriods(date(c.from), date(c.to), c.interval)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s..%s: %v, want %v", c.interval, c.from, c.to, got, c.want)
		}
	}
	// countPeriods agrees with splitPeriods on every start weekday and length.
	for _, iv := range []string{intervalDay, intervalWeek, intervalMonth, intervalNone} {
		for start := date("2025-12-01"); start.Before(date("2026-01-15")); start = start.AddDate(0, 0, 1) {
			for n := 0; n < 80; n++ {
				end := start.AddDate(0, 0, n)
				if got, want := countPeriods(start, end, iv), len(splitPeriods(start, end, iv)); got != want {
					t.Fatalf("%s %s..%s: count %d, split %d", iv, start.Format(time.DateOnly), end.Format(time.DateOnly), got, want)
				}
			}
		}
	}
}
