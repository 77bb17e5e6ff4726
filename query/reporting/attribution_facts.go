package reporting

import (
	"context"
	"fmt"
	"time"
)

// attributedCustomer is one customer row with its shop's first link (selectAttributionCustomersHead).
type attributedCustomer struct {
	key       customerHash
	app       string
	installed time.Time // first install; zero when unknown
	linked    bool      // the shop has a first link in its app
	touched   bool      // that acquisition has stored browser history
	firstSeen time.Time // its first browser event
	grp       string    // its channel value
}

// netRevenueRow is one customer's net revenue in one currency over the range.
type netRevenueRow struct {
	customer customerHash
	currency string
	net      int64
}

// funnelCount is the funnel events of one channel (or of none: resolved, touched false).
type funnelCount struct {
	resolved, touched           bool
	grp                         string
	installs, trials, converted int64
}

func (s *Store) readAttributedCustomers(ctx context.Context, sc Scope, group string) ([]attributedCustomer, error) {
	ws, apps := sc.WorkspaceID, sc.apps()
	rows, err := s.conn.Query(ctx, selectAttributionCustomersHead+group+selectAttributionCustomersTail, ws, apps, ws, apps, ws, apps, ws, apps)
	if err != nil {
		return nil, fmt.Errorf("read attributed customers: %w", err)
	}
	defer rows.Close()
	var out []attributedCustomer
	for rows.Next() {
		var (
			c                attributedCustomer
			installed, first uint32
			linked, touched  uint8
		)
		if err := rows.Scan(&c.key, &c.app, &installed, &linked, &touched, &first, &c.grp); err != nil {
			return nil, fmt.Errorf("read attributed customers: %w", err)
		}
		c.installed, c.firstSeen, c.linked, c.touched = unix(installed), unix(first), linked == 1, touched == 1
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *Store) readNetRevenue(ctx context.Context, sc Scope, r Range) ([]netRevenueRow, error) {
	rows, err := s.conn.Query(ctx, selectNetRevenue, sc.WorkspaceID, sc.apps(), epoch(r.From.Start()), epoch(r.To.End()))
	if err != nil {
		return nil, fmt.Errorf("read net revenue: %w", err)
	}
	defer rows.Close()
	var out []netRevenueRow
	for rows.Next() {
		var n netRevenueRow
		if err := rows.Scan(&n.customer, &n.currency, &n.net); err != nil {
			return nil, fmt.Errorf("read net revenue: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func (s *Store) readAttributionFunnel(ctx context.Context, sc Scope, group string, r Range) ([]funnelCount, error) {
	ws, apps := sc.WorkspaceID, sc.apps()
	rows, err := s.conn.Query(ctx, selectAttributionFunnelHead+group+selectAttributionFunnelTail,
		ws, apps, epoch(r.From.Start()), epoch(r.To.End()), ws, ws, ws, apps)
	if err != nil {
		return nil, fmt.Errorf("read attribution funnel: %w", err)
	}
	defer rows.Close()
	var out []funnelCount
	for rows.Next() {
		var (
			f                 funnelCount
			resolved, touched uint8
			ins, trial, conv  uint64
		)
		if err := rows.Scan(&resolved, &touched, &f.grp, &ins, &trial, &conv); err != nil {
			return nil, fmt.Errorf("read attribution funnel: %w", err)
		}
		f.resolved, f.touched = resolved == 1, touched == 1
		f.installs, f.trials, f.converted = int64(ins), int64(trial), int64(conv)
		out = append(out, f)
	}
	return out, rows.Err()
}

func (s *Store) readAttributionAcquisitions(ctx context.Context, sc Scope, group string, r Range) (map[string]int64, error) {
	rows, err := s.conn.Query(ctx, selectAttributionAcquisitionsHead+group+selectAttributionAcquisitionsTail,
		sc.WorkspaceID, sc.apps(), epoch(r.From.Start()), epoch(r.To.End()))
	if err != nil {
		return nil, fmt.Errorf("read acquisitions: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			grp string
			n   uint64
		)
		if err := rows.Scan(&grp, &n); err != nil {
			return nil, fmt.Errorf("read acquisitions: %w", err)
		}
		out[grp] += int64(n)
	}
	return out, rows.Err()
}

func (s *Store) readTrackingSince(ctx context.Context, sc Scope) (map[string]time.Time, error) {
	rows, err := s.conn.Query(ctx, selectTrackingSince, sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read tracking coverage: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			app   string
			first uint32
		)
		if err := rows.Scan(&app, &first); err != nil {
			return nil, fmt.Errorf("read tracking coverage: %w", err)
		}
		if first != 0 {
			out[app] = unix(first)
		}
	}
	return out, rows.Err()
}

// addCustomers evaluates every in-scope customer on asOf as the summary does (summary.go,
// currencySums.add: the qualifying subscription's amrCents and currency, the usage of the trailing
// 30 days per currency) and adds it, with its net revenue, to the row of its first touch. Every
// customer the summary counts is in exactly one row, so the rows add up to the summary's figures.
func (t *attributionTable) addCustomers(f *summaryFacts, ex *exclusions, asOf Date, customers []attributedCustomer,
	net []netRevenueRow, since map[string]time.Time) {
	byKey := make(map[customerHash]*attributedCustomer, len(customers))
	for i := range customers {
		byKey[customers[i].key] = &customers[i]
	}
	rowOf := map[customerHash]*AttributionRow{}
	row := func(k customerHash) *AttributionRow {
		r, ok := rowOf[k]
		if !ok {
			r = t.customerRow(byKey[k], since)
			rowOf[k] = r
			r.Customers++
		}
		return r
	}
	money := func(r *AttributionRow, cur string, add func(*AttributionMoney)) {
		m := r.ByCurrency[cur]
		add(&m)
		r.ByCurrency[cur] = m
	}
	for i := range customers {
		if ex.admits(ScopeIncluded, customers[i].key) {
			row(customers[i].key)
		}
	}
	var buf billingBuffers
	for _, c := range f.join() {
		if !ex.admits(ScopeIncluded, c.key) {
			continue
		}
		r := row(c.key)
		if c.charges != 0 {
			onA, _ := f.billing(&c, &buf)
			ev := evaluate(asOf, onA, false, buf.scratchA)
			buf.scratchA = ev.NonTest
			if ev.Paying {
				r.PayingCustomers++
				money(r, ev.Currency, func(m *AttributionMoney) {
					m.PayingCustomers++
					m.SubscriptionMRRCents += ev.AMRCents
					m.MRRCents += ev.AMRCents
				})
			}
		}
		for ref := c.usage; ref != 0; {
			u := f.usage.at(ref)
			ref = u.next
			if u.usage.TrailingGross == 0 {
				continue // a usage sale in the range only: no usage MRR on asOf
			}
			money(r, u.currency, func(m *AttributionMoney) {
				m.UsageMRRCents += u.usage.TrailingGross
				m.MRRCents += u.usage.TrailingGross
			})
		}
	}
	for _, n := range net {
		if ex.admits(ScopeIncluded, n.customer) {
			money(row(n.customer), n.currency, func(m *AttributionMoney) { m.NetRevenueCents += n.net })
		}
	}
}
