package reporting

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// usageSlices is how many concurrent reads the usage totals of a series are cut into, at month
// starts. Each read is FINAL over its own monthly partitions, and ClickHouse 18.16 merges a FINAL
// read on one thread, so a year of usage sales (the costliest read of a series by far) is
// de-duplicated on every core rather than on one.
const usageSlices = 4

// readTimelineUsageTotals reads the usage sales of the customers the scope admits per currency and
// day in [from, to) (selectTimelineUsageTotals), each currency's days sorted.
func (s *Store) readTimelineUsageTotals(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, from, to time.Time) ([]tlUsage, error) {
	cuts := monthCuts(from, to, usageSlices)
	parts := make([][]dayUsage, len(cuts)-1)
	g, gctx := errgroup.WithContext(ctx)
	for i := range parts {
		g.Go(func() (err error) {
			parts[i], err = s.readUsageDays(gctx, sc, cs, ex, cuts[i], cuts[i+1])
			return
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []tlUsage
	for _, rows := range parts {
		for _, r := range rows {
			i := indexOfCurrency(out, r.cur)
			if i < 0 {
				out, i = append(out, tlUsage{currency: r.cur}), len(out)
			}
			u := &out[i]
			u.days, u.gross, u.net, u.count = append(u.days, r.day), append(u.gross, r.gross), append(u.net, r.net), append(u.count, r.count)
		}
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

// readUsageDays reads one slice of readTimelineUsageTotals.
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

// monthCuts cuts [from, to) into at most n slices at month starts (UTC), as equal in length as
// the months allow: from, the cuts, to.
func monthCuts(from, to time.Time, n int) []time.Time {
	out := []time.Time{from}
	for k := 1; k < n; k++ {
		target := from.Add(to.Sub(from) * time.Duration(k) / time.Duration(n))
		// The month start nearest to the target.
		m := time.Date(target.Year(), target.Month(), 1, 0, 0, 0, 0, time.UTC)
		if next := m.AddDate(0, 1, 0); next.Sub(target) < target.Sub(m) {
			m = next
		}
		if m.After(out[len(out)-1]) && m.Before(to) {
			out = append(out, m)
		}
	}
	return slices.Clip(append(out, to))
}
