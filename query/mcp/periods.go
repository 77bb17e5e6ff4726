package mcp

import (
	"time"
)

// Intervals of a query_metrics series.
const (
	intervalNone  = "none"
	intervalDay   = "day"
	intervalWeek  = "week"
	intervalMonth = "month"
)

// period is an inclusive range of UTC dates, as the REST API takes it.
type period struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// splitPeriods cuts [from, to] into consecutive periods: single dates, ISO weeks (Monday to Sunday)
// or calendar months. The first and last period are clipped to the range, so the periods cover
// exactly the range's dates, each once.
func splitPeriods(from, to time.Time, interval string) []period {
	var out []period
	for start := from; !start.After(to); {
		var next time.Time // first date after the period
		switch interval {
		case intervalDay:
			next = start.AddDate(0, 0, 1)
		case intervalWeek:
			daysToMonday := (8 - int(start.Weekday())) % 7
			if daysToMonday == 0 {
				daysToMonday = 7
			}
			next = start.AddDate(0, 0, daysToMonday)
		case intervalMonth:
			next = time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		default:
			next = to.AddDate(0, 0, 1)
		}
		end := next.AddDate(0, 0, -1)
		if end.After(to) {
			end = to
		}
		out = append(out, period{From: start.Format(time.DateOnly), To: end.Format(time.DateOnly)})
		start = next
	}
	return out
}

// countPeriods is len(splitPeriods(…)) without building them, to refuse an oversized series early.
func countPeriods(from, to time.Time, interval string) int {
	days := int(to.Sub(from).Hours()/24) + 1
	switch interval {
	case intervalDay:
		return days
	case intervalWeek:
		// Days before the first Monday form a partial week.
		lead := (8 - int(from.Weekday())) % 7
		if lead >= days {
			return 1
		}
		n := 0
		if lead > 0 {
			n = 1
		}
		return n + (days-lead+6)/7
	case intervalMonth:
		return (to.Year()-from.Year())*12 + int(to.Month()) - int(from.Month()) + 1
	}
	return 1
}
