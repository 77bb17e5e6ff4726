package reporting

import (
	"testing"
	"time"
)

// TestMonthCuts: the slices of a series' usage read cover the window exactly, in order, cut only at
// month starts, at most as many as asked; a window within one month is one slice.
func TestMonthCuts(t *testing.T) {
	at := func(s string) time.Time { return MustDate(s).Start() }
	for _, c := range []struct {
		from, to string
		n, want  int
	}{
		{"2025-10-22", "2026-11-26", 4, 4},
		{"2025-10-22", "2026-11-26", 1, 1},
		{"2026-03-02", "2026-03-31", 4, 1},
		{"2026-02-20", "2026-03-10", 4, 2},
		{"2026-01-01", "2026-03-01", 4, 2},
	} {
		cuts := monthCuts(at(c.from), at(c.to), c.n)
		if len(cuts)-1 != c.want || !cuts[0].Equal(at(c.from)) || !cuts[len(cuts)-1].Equal(at(c.to)) {
			t.Errorf("%s … %s in %d: %v", c.from, c.to, c.n, cuts)
			continue
		}
		for i := 1; i < len(cuts)-1; i++ {
			if !cuts[i].After(cuts[i-1]) || cuts[i].Day() != 1 || cuts[i].Hour() != 0 {
				t.Errorf("%s … %s in %d: cut %v", c.from, c.to, c.n, cuts[i])
			}
		}
	}
}
