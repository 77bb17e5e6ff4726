package reporting

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// summaryDates are the two reporting dates the summary evaluates billing on: A = asOf (point-in-time
// metrics) and B = the NRR opening date (from − 1).
type summaryDates struct{ A, B Date }

// chargeEventFacts are a charge's last state events before end(A) and end(B), and its first
// activation.
type chargeEventFacts struct {
	LastA, LastB   Event
	FirstActivated time.Time
}

// usageFacts are one customer's usage transactions in one currency: gross over the trailing 30
// days ending on A, and gross, net and count over the range.
type usageFacts struct {
	TrailingGross                    int64
	RangeGross, RangeNet, RangeCount int64
}

// Rows of the summary's queries, each with its customer.
type (
	summaryChargeRow struct {
		customer customerKey
		charge   Charge
		events   chargeEventFacts
	}
	uninstallRow struct {
		customer customerKey
		a, b     time.Time
	}
	paymentRow struct {
		customer customerKey
		currency string
		a, b     time.Time
	}
	usageRow struct {
		customer customerKey
		currency string
		usage    usageFacts
	}
)

// summaryFacts are the compact facts the summary and the focused metrics are computed from, as read
// (each query fills its own part, concurrently).
type summaryFacts struct {
	excluded   map[customerKey]bool
	charges    [][]summaryChargeRow // in chunks: rows are large, and a growing slice would copy them
	uninstalls []uninstallRow
	payments   []paymentRow
	usage      []usageRow
}

// loadSummaryFacts reads the per-customer facts concurrently; each query reduces in ClickHouse.
func (s *Store) loadSummaryFacts(ctx context.Context, sc Scope, d summaryDates, rng Range) (*summaryFacts, error) {
	f := &summaryFacts{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { f.excluded, err = s.readExcluded(gctx, sc); return })
	g.Go(func() (err error) { f.charges, err = s.readSummaryCharges(gctx, sc, d); return })
	g.Go(func() (err error) { f.uninstalls, err = s.readUninstalls(gctx, sc, d); return })
	g.Go(func() (err error) { f.payments, err = s.readPayments(gctx, sc, d); return })
	g.Go(func() (err error) { f.usage, err = s.readUsage(gctx, sc, d, rng); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return f, nil
}

// summaryCustomer is one customer's facts joined, so that evaluating it needs no lookup.
type summaryCustomer struct {
	excluded  bool
	charges   []ChargeFacts // LastOwn on A
	lastB     []Event       // each charge's LastOwn on B, in the same order
	uninstall [2]time.Time
	paymentsA Payments
	paymentsB Payments
	usage     []usageRow
}

// join groups the rows by customer, one map operation per row.
func (f *summaryFacts) join() []*summaryCustomer {
	byKey := make(map[customerKey]*summaryCustomer, len(f.payments)+len(f.usage))
	get := func(k customerKey) *summaryCustomer {
		c := byKey[k]
		if c == nil {
			c = &summaryCustomer{excluded: f.excluded[k]}
			byKey[k] = c
		}
		return c
	}
	for _, chunk := range f.charges {
		for i := range chunk {
			r := &chunk[i]
			c := get(r.customer)
			c.charges = append(c.charges, ChargeFacts{Charge: &r.charge, LastOwn: r.events.LastA, FirstActivated: r.events.FirstActivated})
			c.lastB = append(c.lastB, r.events.LastB)
		}
	}
	for _, r := range f.uninstalls {
		get(r.customer).uninstall = [2]time.Time{r.a, r.b}
	}
	for _, r := range f.payments {
		c := get(r.customer)
		c.paymentsA = append(c.paymentsA, Payment{Currency: r.currency, At: r.a})
		c.paymentsB = append(c.paymentsB, Payment{Currency: r.currency, At: r.b})
	}
	for _, r := range f.usage {
		c := get(r.customer)
		c.usage = append(c.usage, r)
	}
	out := make([]*summaryCustomer, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, c)
	}
	return out
}

// onA and onB are the customer's billing facts on A and on B.
func (c *summaryCustomer) onA() CustomerBilling {
	return CustomerBilling{Charges: c.charges, LastUninstall: c.uninstall[0], LastPayment: c.paymentsA}
}

func (c *summaryCustomer) onB() CustomerBilling {
	charges := make([]ChargeFacts, len(c.charges))
	for i, ch := range c.charges {
		ch.LastOwn = c.lastB[i]
		charges[i] = ch
	}
	return CustomerBilling{Charges: charges, LastUninstall: c.uninstall[1], LastPayment: c.paymentsB}
}

func (s *Store) readExcluded(ctx context.Context, sc Scope) (map[customerKey]bool, error) {
	rows, err := s.conn.Query(ctx, selectExcludedCustomers, sc.WorkspaceID, sc.apps(), sc.WorkspaceID, sc.WorkspaceID)
	if err != nil {
		return nil, fmt.Errorf("read excluded customers: %w", err)
	}
	defer rows.Close()
	out := map[customerKey]bool{}
	for rows.Next() {
		var k customerKey
		if err := rows.Scan(&k.AppID, &k.CustomerID); err != nil {
			return nil, fmt.Errorf("read excluded customers: %w", err)
		}
		out[k] = true
	}
	return out, rows.Err()
}

// chargeChunk rows per chunk of readSummaryCharges.
const chargeChunk = 4096

func (s *Store) readSummaryCharges(ctx context.Context, sc Scope, d summaryDates) ([][]summaryChargeRow, error) {
	rows, err := s.conn.Query(ctx, selectSummaryCharges, sc.WorkspaceID, sc.apps(), epoch(d.A.End()), epoch(d.B.End()), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read charges: %w", err)
	}
	defer rows.Close()
	var out [][]summaryChargeRow
	for rows.Next() {
		if len(out) == 0 || len(out[len(out)-1]) == chargeChunk {
			out = append(out, make([]summaryChargeRow, 0, chargeChunk))
		}
		chunk := &out[len(out)-1]
		*chunk = (*chunk)[:len(*chunk)+1]
		r := &(*chunk)[len(*chunk)-1]
		var (
			trial                      uint16
			accepted, activated, ended uint32
			lastA, lastB               uint64
			first                      uint32
		)
		c := &r.charge
		if err := rows.Scan(&c.AppID, &c.CustomerID, &c.ID, &c.AmountCents, &c.Currency, &c.Interval, &c.Status, &c.EndReason, &trial,
			&accepted, &activated, &ended, &lastA, &lastB, &first); err != nil {
			return nil, fmt.Errorf("read charges: %w", err)
		}
		c.Kind, c.TrialDays = "subscription", int(trial)
		c.AcceptedAt, c.ActivatedAt, c.EndedAt = unix(accepted), unix(activated), unix(ended)
		r.customer = customerKey{c.AppID, c.CustomerID}
		r.events = chargeEventFacts{LastA: eventFromKey(lastA), LastB: eventFromKey(lastB), FirstActivated: unix(first)}
	}
	return out, rows.Err()
}

func (s *Store) readUninstalls(ctx context.Context, sc Scope, d summaryDates) ([]uninstallRow, error) {
	rows, err := s.conn.Query(ctx, selectUninstalls, epoch(d.A.End()), epoch(d.B.End()), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read uninstalls: %w", err)
	}
	defer rows.Close()
	var out []uninstallRow
	for rows.Next() {
		var (
			r    uninstallRow
			a, b uint32
		)
		if err := rows.Scan(&r.customer.AppID, &r.customer.CustomerID, &a, &b); err != nil {
			return nil, fmt.Errorf("read uninstalls: %w", err)
		}
		r.a, r.b = unix(a), unix(b)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) readPayments(ctx context.Context, sc Scope, d summaryDates) ([]paymentRow, error) {
	endA, endB := d.A.End(), d.B.End()
	// B is never after A: [end(B) − 395 days, end(A)) holds every row either date's evidence needs,
	// and the rows before end(B) − 45 days matter only for customers with an annual charge.
	rows, err := s.conn.Query(ctx, selectPaymentFacts, epoch(endA), epoch(endB), sc.WorkspaceID, sc.apps(),
		epoch(endB.AddDate(0, 0, -annualEvidenceDays)), epoch(endA), epoch(endB.AddDate(0, 0, -monthlyEvidenceDays)),
		sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read payments: %w", err)
	}
	defer rows.Close()
	var out []paymentRow
	for rows.Next() {
		var (
			r    paymentRow
			a, b uint32
		)
		if err := rows.Scan(&r.customer.AppID, &r.customer.CustomerID, &r.currency, &a, &b); err != nil {
			return nil, fmt.Errorf("read payments: %w", err)
		}
		r.a, r.b = unix(a), unix(b)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) readUsage(ctx context.Context, sc Scope, d summaryDates, rng Range) ([]usageRow, error) {
	trailing, from := d.A.AddDays(-29).Start(), rng.From.Start()
	rows, err := s.conn.Query(ctx, selectUsageFacts, epoch(trailing), epoch(from), epoch(from), epoch(from), sc.WorkspaceID, sc.apps(),
		epoch(earlierOf(trailing, from)), epoch(d.A.End()))
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	var out []usageRow
	for rows.Next() {
		var (
			r usageRow
			n uint64
		)
		if err := rows.Scan(&r.customer.AppID, &r.customer.CustomerID, &r.currency, &r.usage.TrailingGross, &r.usage.RangeGross,
			&r.usage.RangeNet, &n); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		r.usage.RangeCount = int64(n)
		out = append(out, r)
	}
	return out, rows.Err()
}

func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
