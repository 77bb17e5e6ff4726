package query

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// The parameter parsers of the /api/v1 routes take the raw named values of a request (a REST
// request's query string; the arguments of an MCP tool, which the tools write as the same names) and
// return typed, validated parameters: REST and MCP validate with one parser (docs/MCP.md).

// errInvalidParam wraps every 400 of this edge.
var errInvalidParam = errors.New("invalid parameter")

func invalidParam(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errInvalidParam, fmt.Sprintf(format, a...))
}

// Range is an inclusive range of UTC dates (YYYY-MM-DD), as the reporting API speaks.
type Range struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Start and End bound the range as instants: [From 00:00, To+1 00:00).
func (r Range) Start() time.Time { t, _ := time.Parse(time.DateOnly, r.From); return t }
func (r Range) End() time.Time   { t, _ := time.Parse(time.DateOnly, r.To); return t.AddDate(0, 0, 1) }

// maxRangeDays bounds a query so that one request cannot scan years of raw events.
const maxRangeDays = 366

// parseRange reads from/to. Without them the range is the last 30 days ending today (UTC), the
// default reporting range (docs/METRICS.md 1.2).
func parseRange(q url.Values, now time.Time) (Range, error) {
	today := now.UTC().Format(time.DateOnly)
	r := Range{From: q.Get("from"), To: q.Get("to")}
	if r.To == "" {
		r.To = today
	}
	to, err := time.Parse(time.DateOnly, r.To)
	if err != nil {
		return r, invalidParam("to must be a date YYYY-MM-DD")
	}
	if r.From == "" {
		r.From = to.AddDate(0, 0, -29).Format(time.DateOnly)
	}
	from, err := time.Parse(time.DateOnly, r.From)
	if err != nil {
		return r, invalidParam("from must be a date YYYY-MM-DD")
	}
	if from.After(to) {
		return r, invalidParam("from must not be after to")
	}
	if to.Sub(from) > maxRangeDays*24*time.Hour {
		return r, invalidParam("the range may span at most %d days", maxRangeDays)
	}
	return r, nil
}

// parseLimit reads an integer limit within [1, max], def when absent.
func parseLimit(q url.Values, def, max int) (int, error) {
	s := q.Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, invalidParam("limit must be an integer from 1 to %d", max)
	}
	return n, nil
}
