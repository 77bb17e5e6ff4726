package reporting

import (
	"context"
	"fmt"
	"time"
)

// UsageName is one event name's counts in a usage-activity block.
type UsageName struct {
	Name       string `json:"name"`
	EventCount int64  `json:"eventCount"`
	TotalCount int64  `json:"totalCount"`
}

// UsageActivity is METRICS 4.2: received usage events, counted by occurrence date. Complete is
// always null: received events cannot be verified as complete.
type UsageActivity struct {
	Source         string      `json:"source"`
	EventCount     int64       `json:"eventCount"`
	TotalCount     int64       `json:"totalCount"`
	ByName         []UsageName `json:"byName"`
	LastOccurredAt Timestamp   `json:"lastOccurredAt"`
	Loaded         bool        `json:"loaded"`
	Complete       *bool       `json:"complete"`
}

// BilledUsage is METRICS 3.10.
type BilledUsage struct {
	GrossCents       int64 `json:"grossCents"`
	FeesCents        int64 `json:"feesCents"`
	NetCents         int64 `json:"netCents"`
	TransactionCount int64 `json:"transactionCount"`
	Complete         bool  `json:"complete"`
}

// ObservedUsage is METRICS 3.11 (the summary's block).
type ObservedUsage struct {
	GrossCents int64 `json:"grossCents"`
	Count      int64 `json:"count"`
}

// usageActivity reads METRICS 4.2 for the covered apps (or the given customers) over [from, to). A
// failed read is not an error of the response: the block says loaded = false and the failure is
// logged, because usage activity never decides a money figure.
func (s *Store) usageActivity(ctx context.Context, sc Scope, cs CustomerScope, customers []customerKey, from, to time.Time) UsageActivity {
	a := UsageActivity{Source: usageEventsSource, ByName: []UsageName{}}
	q := new(stmt).add(usageActivityHead, sc.WorkspaceID, sc.apps(), epoch(from), epoch(to))
	if customers != nil {
		q.add(andCustomers, customerIDs(customers), pairs(customers))
	}
	scopeFilter(q, cs, sc.WorkspaceID, sc)
	text, args := q.add(usageActivityTail).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		s.log.Warn("usage activity not loaded", "err", err)
		return a
	}
	defer rows.Close()
	var last uint32
	for rows.Next() {
		var (
			n          UsageName
			events     uint64
			lastOfName uint32
		)
		if err := rows.Scan(&n.Name, &events, &n.TotalCount, &lastOfName); err != nil {
			s.log.Warn("usage activity not loaded", "err", err)
			return UsageActivity{Source: usageEventsSource, ByName: []UsageName{}}
		}
		n.EventCount = int64(events)
		a.ByName = append(a.ByName, n)
		a.EventCount += n.EventCount
		a.TotalCount += n.TotalCount
		last = max(last, lastOfName)
	}
	if err := rows.Err(); err != nil {
		s.log.Warn("usage activity not loaded", "err", err)
		return UsageActivity{Source: usageEventsSource, ByName: []UsageName{}}
	}
	a.LastOccurredAt, a.Loaded = Timestamp(unix(last)), true
	return a
}

// observedUsage reads METRICS 3.11 per currency.
func (s *Store) observedUsage(ctx context.Context, sc Scope, cs CustomerScope, from, to time.Time) (map[string]ObservedUsage, error) {
	q := new(stmt).add(observedUsageHead, sc.WorkspaceID, sc.apps(), epoch(from), epoch(to), sc.WorkspaceID, sc.apps())
	scopeFilter(q, cs, sc.WorkspaceID, sc)
	text, args := q.add(byCurrencyTail).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read observed usage charges: %w", err)
	}
	defer rows.Close()
	out := map[string]ObservedUsage{}
	for rows.Next() {
		var (
			cur   string
			gross int64
			n     uint64
		)
		if err := rows.Scan(&cur, &gross, &n); err != nil {
			return nil, fmt.Errorf("read observed usage charges: %w", err)
		}
		out[cur] = ObservedUsage{GrossCents: gross, Count: int64(n)}
	}
	return out, rows.Err()
}
