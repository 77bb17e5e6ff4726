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

// exclusions are the covered apps' excluded customers (METRICS 1.3), read once per request.
type exclusions struct {
	keys  map[customerHash]bool
	pairs []customerPair
	ids   []string // their public IDs
}

func (s *Store) readExclusions(ctx context.Context, sc Scope) (*exclusions, error) {
	ws := sc.WorkspaceID
	ex := &exclusions{keys: map[customerHash]bool{}}
	var rules uint64
	if err := s.conn.QueryRow(ctx, selectExclusionCount, ws).Scan(&rules); err != nil {
		return nil, fmt.Errorf("read exclusions: %w", err)
	}
	if rules == 0 { // most workspaces: no need to look at the customers' domains
		return ex, nil
	}
	rows, err := s.conn.Query(ctx, selectExcludedCustomers, ws, sc.apps(), ws, sc.apps(), ws, ws, ws)
	if err != nil {
		return nil, fmt.Errorf("read excluded customers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			p  customerPair
		)
		if err := rows.Scan(&id, &p.AppID, &p.CustomerID); err != nil {
			return nil, fmt.Errorf("read excluded customers: %w", err)
		}
		if h, ok := hashOf(id); ok {
			ex.keys[h] = true
		}
		ex.pairs, ex.ids = append(ex.pairs, p), append(ex.ids, id)
	}
	return ex, rows.Err()
}

// admits reports whether a customer's rows enter aggregates of the scope.
func (ex *exclusions) admits(cs CustomerScope, h customerHash) bool { return cs.admits(ex.keys[h]) }

// scopeFilter appends the customerScope condition on the (app_id, customer_id) of a table's rows
// (a row without a customer row counts as included). ok is false when the scope admits no row at
// all: the excluded customers, and there are none.
func scopeFilter(q *stmt, cs CustomerScope, ex *exclusions, sc Scope) (ok bool) {
	return addScope(q, cs, ex, sc, pairSet(ex.pairs), [4]string{andNotExcluded, andExcluded, andNotExcludedQuery, andExcludedQuery})
}

// scopeFilterByID is scopeFilter on the public_id of a reporting copy.
func scopeFilterByID(q *stmt, cs CustomerScope, ex *exclusions, sc Scope) (ok bool) {
	return addScope(q, cs, ex, sc, idSet(ex.ids), [4]string{andIDNotExcluded, andIDExcluded, andIDNotExcludedQuery, andIDExcludedQuery})
}

// addScope appends one of conds (not excluded and excluded with the excluded customers bound as
// bound, then the same selecting them again) as the scope asks.
func addScope(q *stmt, cs CustomerScope, ex *exclusions, sc Scope, bound any, conds [4]string) bool {
	n := len(ex.pairs)
	if cs == ScopeAll || (cs == ScopeIncluded && n == 0) {
		return true
	}
	if n == 0 {
		return false
	}
	notIn, in := conds[0], conds[1]
	arg := []any{bound}
	if n > maxBoundCustomers {
		ws := sc.WorkspaceID
		notIn, in = conds[2], conds[3]
		arg = []any{ws, sc.apps(), ws, sc.apps(), ws, ws, ws}
	}
	if cs == ScopeExcluded {
		q.add(in, arg...)
	} else {
		q.add(notIn, arg...)
	}
	return true
}

// maxBoundCustomers is the most excluded customers bound as a literal set; more are selected by a
// subquery, which keeps the query under ClickHouse's max_query_size. A variable for the
// compatibility test, which sends both forms.
var maxBoundCustomers = 1000

// usageActivity reads METRICS 4.2 for the covered apps over [from, to). A failed read is not an
// error of the response: the block says loaded = false and the failure is logged, because usage
// activity never decides a money figure.
func (s *Store) usageActivity(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, from, to time.Time) UsageActivity {
	q := new(stmt).add(usageActivityHead, sc.WorkspaceID, sc.apps(), epoch(from), epoch(to))
	if !scopeFilter(q, cs, ex, sc) {
		return UsageActivity{Source: usageEventsSource, ByName: []UsageName{}, Loaded: true}
	}
	text, args := q.add(usageActivityTail).query()
	return s.readUsageActivity(ctx, text, args...)
}

// customerUsageActivity is METRICS 4.2 for one customer over [from, to).
func (s *Store) customerUsageActivity(ctx context.Context, sc Scope, publicID string, from, to time.Time) UsageActivity {
	return s.readUsageActivity(ctx, selectCustomerUsageActivity, sc.WorkspaceID, sc.apps(), publicID, epoch(from), epoch(to))
}

func (s *Store) readUsageActivity(ctx context.Context, query string, args ...any) UsageActivity {
	a := UsageActivity{Source: usageEventsSource, ByName: []UsageName{}}
	rows, err := s.conn.Query(ctx, query, args...)
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

// observedUsage reads METRICS 3.11 per currency over [from, to), whole UTC days; without sums, only which currencies have an
// observed usage charge (the values are then not the sums, and must not be shown).
func (s *Store) observedUsage(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, from, to time.Time, sums bool) (map[string]ObservedUsage, error) {
	head := observedUsageHead
	if !sums {
		head = observedCurrenciesHead
	}
	q := new(stmt).add(head, sc.WorkspaceID, sc.apps(), epochDay(from), epochDay(to))
	out := map[string]ObservedUsage{}
	if !scopeFilterByID(q, cs, ex, sc) {
		return out, nil
	}
	text, args := q.add(observedDaysTail, sc.WorkspaceID, sc.apps()).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read observed usage charges: %w", err)
	}
	defer rows.Close()
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
