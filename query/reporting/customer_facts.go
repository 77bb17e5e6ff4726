package reporting

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// The customer list and the detail read the rows of the customers they show (a page at most) and
// reduce them in Go: one scan per table gives both the customer fields and the detail's timeline.

// customerRow is a platform_customers row with its exclusion flag.
type customerRow struct {
	AppID, CustomerID, PublicID, Domain, Name, Status string
	InstalledAt, LastEventAt                          time.Time
	Excluded                                          bool
}

func (r customerRow) key() string { return r.PublicID }

// eventRow is one lifecycle event of a customer.
type eventRow struct {
	Key, Type, ChargeID, ChargeName string
	At                              time.Time
	Amount                          *int64
	Currency, Reason, Description   string
}

// txRow is one transaction of a customer (its latest version).
type txRow struct {
	ID, Type, Currency, Interval string
	At                           time.Time
	Gross, Fee, Net              int64
}

// usageChargeRow is one non-test usage charge of a customer.
type usageChargeRow struct {
	Currency string
	Amount   int64
	At       time.Time
}

// eventSummary is one customer's lifecycle events reduced on D.
type eventSummary struct {
	FirstAt, LastAt               time.Time   // first ever; last before end(D)
	LastUninstall, FirstUninstall time.Time   // before end(D)
	LastInstall                   time.Time   // before end(D)
	Uninstalls                    []time.Time // all, whatever D (ChargeFacts.Ended)
}

// txFacts are one customer's transactions in one currency, reduced on D.
type txFacts struct {
	LifetimeNet, LifetimeCount            int64
	AnnualCount, UsageCount, OneTimeCount int64
	Gross30, Fee30, Net30                 int64
	Subscription30, Usage30, OneTime30    int64
	GiveBack30, GiveBackCount30, Count30  int64
}

// usageChargeFacts are one customer's non-test usage charges in one currency, reduced on D.
type usageChargeFacts struct {
	Count    int64
	LastAt   time.Time
	Gross30  int64
	Count30  int64
	LastAt30 time.Time
}

// chargeEventFacts are a charge's last state event before end(D), its first activation and its
// first own ending event (whatever D).
type chargeEventFacts struct {
	LastA          Event
	FirstActivated time.Time
	OwnEnd         time.Time
}

// chargeKey is one customer's charge.
type chargeKey struct{ PublicID, ChargeID string }

// customerFacts are the rows of a set of customers and their reductions on one reporting date D,
// by public ID.
type customerFacts struct {
	charges      map[string][]*Charge // every charge, all kinds
	events       map[string][]eventRow
	txs          map[string][]txRow
	chargeEvents map[chargeKey]chargeEventFacts
	summary      map[string]eventSummary
	tx           map[string]map[string]*txFacts
	usageCharges map[string]map[string]usageChargeFacts
	usageEvents  map[string]time.Time
	paid         map[string]Payments // the latest subscription payment before end(D) per charge and currency
}

// pageArgs binds a set of customers as andPageCustomers does: the bounds of their key range, then
// the set.
func pageArgs(ids []string) []any {
	sorted := slices.Sorted(slices.Values(ids))
	return []any{sorted[0], sorted[len(sorted)-1], idSet(sorted)}
}

// loadCustomerFacts reads the rows of the given customers (public IDs, of the covered apps)
// concurrently and reduces them on date d.
func (s *Store) loadCustomerFacts(ctx context.Context, sc Scope, ids []string, d Date) (*customerFacts, error) {
	f := &customerFacts{}
	if len(ids) == 0 {
		return f, nil
	}
	page := pageArgs(ids)
	var usageCharges map[string][]usageChargeRow
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { f.charges, err = s.readCustomerCharges(gctx, sc, page); return })
	g.Go(func() (err error) { f.events, err = s.readCustomerEvents(gctx, sc, page); return })
	g.Go(func() (err error) { f.txs, err = s.readCustomerTransactions(gctx, sc, page); return })
	g.Go(func() (err error) { usageCharges, err = s.readCustomerUsageCharges(gctx, sc, page); return })
	g.Go(func() (err error) {
		f.usageEvents, err = s.readCustomerUsageEvents(gctx, sc, page, d.End())
		return
	})
	g.Go(func() (err error) { f.paid, err = s.readCustomerPayments(gctx, sc, page, d.End()); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	f.reduce(d, usageCharges)
	return f, nil
}

// loadListFacts reads what the customer list needs of the given customers on date d: the rows of
// their charges and transactions, and their events and usage charges already reduced in
// ClickHouse. It fills what loadCustomerFacts does except the rows a timeline needs (events, and the
// usage charges' currencies and 30-day sums, which only the detail shows).
func (s *Store) loadListFacts(ctx context.Context, sc Scope, ids []string, d Date) (*customerFacts, error) {
	f := &customerFacts{}
	if len(ids) == 0 {
		return f, nil
	}
	page := pageArgs(ids)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { f.charges, err = s.readCustomerCharges(gctx, sc, page); return })
	g.Go(func() error { return s.readListEventFacts(gctx, sc, page, d, f) })
	g.Go(func() (err error) { f.txs, err = s.readCustomerTransactions(gctx, sc, page); return })
	g.Go(func() (err error) { f.usageCharges, err = s.readListUsageChargeFacts(gctx, sc, page, d); return })
	g.Go(func() (err error) {
		f.usageEvents, err = s.readCustomerUsageEvents(gctx, sc, page, d.End())
		return
	})
	g.Go(func() (err error) { f.paid, err = s.readCustomerPayments(gctx, sc, page, d.End()); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	f.reduceTransactions(d)
	return f, nil
}

// readListEventFacts fills the relationship history and the charge-state events on d
// (selectListEventFacts).
func (s *Store) readListEventFacts(ctx context.Context, sc Scope, page []any, d Date, f *customerFacts) error {
	end := epoch(d.End())
	rows, err := s.conn.Query(ctx, selectListEventFacts, append([]any{end, end, end, end, end, sc.WorkspaceID, sc.apps()}, page...)...)
	if err != nil {
		return fmt.Errorf("read customer events: %w", err)
	}
	defer rows.Close()
	f.chargeEvents, f.summary = map[chargeKey]chargeEventFacts{}, map[string]eventSummary{}
	for rows.Next() {
		var (
			k, charge                                              string
			first, last, activated, lastUn, firstUn, lastInstalled uint32
			ownEnd                                                 uint32
			lastState                                              uint64
			uninstalls                                             []uint32
		)
		if err := rows.Scan(&k, &charge, &first, &last, &lastState, &activated, &lastUn, &firstUn, &lastInstalled, &ownEnd,
			&uninstalls); err != nil {
			return fmt.Errorf("read customer events: %w", err)
		}
		e := f.summary[k]
		e.FirstAt, e.LastAt = earliest(e.FirstAt, unix(first)), latest(e.LastAt, unix(last))
		e.LastUninstall, e.FirstUninstall = latest(e.LastUninstall, unix(lastUn)), earliest(e.FirstUninstall, unix(firstUn))
		e.LastInstall = latest(e.LastInstall, unix(lastInstalled))
		e.Uninstalls = append(e.Uninstalls, unixAll(uninstalls)...)
		f.summary[k] = e
		if charge != "" {
			f.chargeEvents[chargeKey{k, charge}] = chargeEventFacts{LastA: eventFromKey(lastState), FirstActivated: unix(activated),
				OwnEnd: unix(ownEnd)}
		}
	}
	return rows.Err()
}

// readListUsageChargeFacts reads each customer's latest non-test usage charge before end(D), which
// is all the list needs of them (the usage_billing tag and lastActive): the facts carry no currency,
// and Count is 1 for a customer with one.
func (s *Store) readListUsageChargeFacts(ctx context.Context, sc Scope, page []any, d Date) (map[string]map[string]usageChargeFacts, error) {
	args := append(append([]any{epoch(d.End()), sc.WorkspaceID, sc.apps()}, page...), sc.WorkspaceID, sc.apps())
	rows, err := s.conn.Query(ctx, selectListUsageChargeFacts, args...)
	if err != nil {
		return nil, fmt.Errorf("read customer usage charges: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]usageChargeFacts{}
	for rows.Next() {
		var (
			k    string
			last uint32
		)
		if err := rows.Scan(&k, &last); err != nil {
			return nil, fmt.Errorf("read customer usage charges: %w", err)
		}
		if last != 0 {
			out[k] = map[string]usageChargeFacts{"": {Count: 1, LastAt: unix(last)}}
		}
	}
	return out, rows.Err()
}

func (s *Store) readCustomerCharges(ctx context.Context, sc Scope, page []any) (map[string][]*Charge, error) {
	args := append(append([]any{sc.WorkspaceID, sc.apps()}, page...), sc.WorkspaceID, sc.apps())
	rows, err := s.conn.Query(ctx, selectCustomerCharges, append(args, page...)...)
	if err != nil {
		return nil, fmt.Errorf("read customer charges: %w", err)
	}
	defer rows.Close()
	out := map[string][]*Charge{}
	for rows.Next() {
		var (
			c                          Charge
			k                          string
			test                       uint8
			trial                      uint16
			accepted, activated, ended uint32
			billingOn                  uint32
		)
		if err := rows.Scan(&k, &c.ID, &c.Kind, &c.Name, &c.AmountCents, &c.Currency, &c.Interval, &c.Status,
			&c.EndReason, &test, &trial, &accepted, &activated, &ended, &billingOn); err != nil {
			return nil, fmt.Errorf("read customer charges: %w", err)
		}
		c.Test, c.TrialDays = test == 1, int(trial)
		c.AcceptedAt, c.ActivatedAt, c.EndedAt, c.BillingOn = unix(accepted), unix(activated), unix(ended), unix(billingOn)
		out[k] = append(out[k], &c)
	}
	return out, rows.Err()
}

func (s *Store) readCustomerEvents(ctx context.Context, sc Scope, page []any) (map[string][]eventRow, error) {
	rows, err := s.conn.Query(ctx, selectCustomerEvents, append([]any{sc.WorkspaceID, sc.apps()}, page...)...)
	if err != nil {
		return nil, fmt.Errorf("read customer events: %w", err)
	}
	defer rows.Close()
	out := map[string][]eventRow{}
	for rows.Next() {
		var (
			k         string
			e         eventRow
			at        uint32
			amount    int64
			hasAmount uint8
		)
		if err := rows.Scan(&k, &e.Key, &e.Type, &at, &e.ChargeID, &e.ChargeName, &amount, &hasAmount, &e.Currency,
			&e.Reason, &e.Description); err != nil {
			return nil, fmt.Errorf("read customer events: %w", err)
		}
		e.At = unix(at)
		if hasAmount == 1 {
			e.Amount = &amount
		}
		out[k] = append(out[k], e)
	}
	return out, rows.Err()
}

func (s *Store) readCustomerTransactions(ctx context.Context, sc Scope, page []any) (map[string][]txRow, error) {
	rows, err := s.conn.Query(ctx, selectCustomerTransactions, append([]any{sc.WorkspaceID, sc.apps()}, page...)...)
	if err != nil {
		return nil, fmt.Errorf("read customer transactions: %w", err)
	}
	defer rows.Close()
	out := map[string][]txRow{}
	for rows.Next() {
		var (
			k  string
			t  txRow
			at uint32
		)
		if err := rows.Scan(&k, &t.ID, &t.Type, &at, &t.Currency, &t.Gross, &t.Fee, &t.Net, &t.Interval); err != nil {
			return nil, fmt.Errorf("read customer transactions: %w", err)
		}
		t.At = unix(at)
		out[k] = append(out[k], t)
	}
	return out, rows.Err()
}

func (s *Store) readCustomerUsageCharges(ctx context.Context, sc Scope, page []any) (map[string][]usageChargeRow, error) {
	args := append(append([]any{sc.WorkspaceID, sc.apps()}, page...), sc.WorkspaceID, sc.apps())
	rows, err := s.conn.Query(ctx, selectCustomerUsageCharges, args...)
	if err != nil {
		return nil, fmt.Errorf("read customer usage charges: %w", err)
	}
	defer rows.Close()
	out := map[string][]usageChargeRow{}
	for rows.Next() {
		var (
			k      string
			id     string
			u      usageChargeRow
			at     uint32
			amount int64
		)
		if err := rows.Scan(&k, &id, &u.Currency, &amount, &at); err != nil {
			return nil, fmt.Errorf("read customer usage charges: %w", err)
		}
		u.Amount, u.At = amount, unix(at)
		out[k] = append(out[k], u)
	}
	return out, rows.Err()
}

func (s *Store) readCustomerUsageEvents(ctx context.Context, sc Scope, page []any, end time.Time) (map[string]time.Time, error) {
	rows, err := s.conn.Query(ctx, selectCustomerUsageEventFacts, append([]any{epoch(end), sc.WorkspaceID, sc.apps()}, page...)...)
	if err != nil {
		return nil, fmt.Errorf("read customer usage events: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			k    string
			last uint32
		)
		if err := rows.Scan(&k, &last); err != nil {
			return nil, fmt.Errorf("read customer usage events: %w", err)
		}
		out[k] = unix(last)
	}
	return out, rows.Err()
}

// reduce computes, on date d, what the customer fields need from the rows: the charge-state events
// (METRICS 2.1), the relationship history, the transaction sums and the usage charges.
func (f *customerFacts) reduce(d Date, usageCharges map[string][]usageChargeRow) {
	f.reduceEvents(d)
	f.reduceTransactions(d)
	f.reduceUsageCharges(d, usageCharges)
}

// reduceEvents is the charge-state events and the relationship history on date d; the list reads
// the same from ClickHouse (selectListEventFacts).
func (f *customerFacts) reduceEvents(d Date) {
	end := d.End()
	f.chargeEvents, f.summary = map[chargeKey]chargeEventFacts{}, map[string]eventSummary{}
	for k, evs := range f.events {
		var s eventSummary
		for _, e := range evs {
			s.FirstAt = earliest(s.FirstAt, e.At)
			before := e.At.Before(end)
			if before {
				s.LastAt = latest(s.LastAt, e.At)
			}
			if kind, ok := chargeEventKinds[e.Type]; ok && e.ChargeID != "" {
				ck := chargeKey{k, e.ChargeID}
				c := f.chargeEvents[ck]
				if before {
					c.LastA = later(c.LastA, Event{Kind: kind, At: e.At})
				}
				switch kind {
				case EventActivated:
					c.FirstActivated = earliest(c.FirstActivated, e.At)
				case EventCanceled, EventDeclined, EventExpired:
					c.OwnEnd = earliest(c.OwnEnd, e.At)
				}
				f.chargeEvents[ck] = c
			}
			if e.Type == typeUninstalled {
				s.Uninstalls = append(s.Uninstalls, e.At)
			}
			if !before {
				continue
			}
			switch e.Type {
			case typeUninstalled:
				s.LastUninstall, s.FirstUninstall = latest(s.LastUninstall, e.At), earliest(s.FirstUninstall, e.At)
			case typeInstalled:
				s.LastInstall = latest(s.LastInstall, e.At)
			}
		}
		f.summary[k] = s
	}
}

// reduceTransactions is the transaction sums on date d.
func (f *customerFacts) reduceTransactions(d Date) {
	end, from30 := d.End(), d.AddDays(-29).Start()
	f.tx = map[string]map[string]*txFacts{}
	for k, txs := range f.txs {
		byCur := map[string]*txFacts{}
		for _, t := range txs {
			if !t.At.Before(end) {
				continue
			}
			x := byCur[t.Currency]
			if x == nil {
				x = &txFacts{}
				byCur[t.Currency] = x
			}
			x.LifetimeNet += t.Net
			x.LifetimeCount++
			switch t.Type {
			case "subscription":
				if t.Interval == Annual {
					x.AnnualCount++
				}
			case "usage":
				x.UsageCount++
			case "one_time":
				x.OneTimeCount++
			}
			if t.At.Before(from30) {
				continue
			}
			x.Count30++
			x.Gross30 += t.Gross
			x.Fee30 += t.Fee
			x.Net30 += t.Net
			switch t.Type {
			case "subscription":
				x.Subscription30 += t.Gross
			case "usage":
				x.Usage30 += t.Gross
			case "one_time":
				x.OneTime30 += t.Gross
			case "refund", "adjustment", "credit":
				x.GiveBack30 += t.Gross
				x.GiveBackCount30++
			}
		}
		f.tx[k] = byCur
	}
}

// reduceUsageCharges is the usage-charge facts on date d.
func (f *customerFacts) reduceUsageCharges(d Date, usageCharges map[string][]usageChargeRow) {
	end, from30 := d.End(), d.AddDays(-29).Start()
	f.usageCharges = map[string]map[string]usageChargeFacts{}
	for k, us := range usageCharges {
		byCur := map[string]usageChargeFacts{}
		for _, u := range us {
			if !u.At.Before(end) {
				continue
			}
			x := byCur[u.Currency]
			x.Count++
			x.LastAt = latest(x.LastAt, u.At)
			if !u.At.Before(from30) {
				x.Gross30 += u.Amount
				x.Count30++
				x.LastAt30 = latest(x.LastAt30, u.At)
			}
			byCur[u.Currency] = x
		}
		f.usageCharges[k] = byCur
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
