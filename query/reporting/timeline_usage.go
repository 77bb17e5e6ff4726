package reporting

import (
	"context"
	"fmt"
	"time"
)

// readTimelineUsageTotals reads the usage sales of the customers the scope admits per currency and
// day in [from, to) (selectTimelineUsageTotals), each currency's days sorted. One read: the usage
// days (migration 0028) are not partitioned, so a read cut into slices of days merged every part
// once per slice, and a year of them costs ClickHouse 34–43 ms on one thread against 86 ms for four
// concurrent slices (docs/BENCHMARKS.md, "Usage days").
func (s *Store) readTimelineUsageTotals(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, from, to time.Time) ([]tlUsage, error) {
	rows, err := s.readUsageDays(ctx, sc, cs, ex, from, to)
	if err != nil {
		return nil, err
	}
	var out []tlUsage
	for _, r := range rows {
		i := indexOfCurrency(out, r.cur)
		if i < 0 {
			out, i = append(out, tlUsage{currency: r.cur}), len(out)
		}
		u := &out[i]
		u.days, u.gross, u.net, u.count = append(u.days, r.day), append(u.gross, r.gross), append(u.net, r.net), append(u.count, r.count)
	}
	for i := range out {
		sortUsage(&out[i])
	}
	return out, nil
}

// dayUsage is one currency's usage sales on one day (days since the epoch).
type dayUsage struct {
	cur               string
	day               int32
	gross, net, count int64
}

func indexOfCurrency(us []tlUsage, cur string) int {
	for i := range us {
		if us[i].currency == cur {
			return i
		}
	}
	return -1
}

// readUsageDays is the read of readTimelineUsageTotals.
func (s *Store) readUsageDays(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, from, to time.Time) ([]dayUsage, error) {
	q := new(stmt).add(selectTimelineUsageTotals, sc.WorkspaceID, sc.apps(), epochDay(from), epochDay(to))
	if !scopeFilterByID(q, cs, ex, sc) {
		return nil, nil
	}
	text, args := q.add(timelineUsageTotalsTail).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	var out []dayUsage
	for rows.Next() {
		var (
			r   dayUsage
			day uint32
			n   uint64
		)
		if err := rows.Scan(&r.cur, &day, &r.gross, &r.net, &n); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		r.day, r.count = int32(day), int64(n)
		out = append(out, r)
	}
	return out, rows.Err()
}
