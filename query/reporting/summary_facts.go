package reporting

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// summaryDates are the two reporting dates the summary evaluates billing on: A = asOf (point-in-time
// metrics) and B = the NRR opening date (from − 1).
type summaryDates struct{ A, B Date }

// usageFacts are one customer's usage transactions in one currency: gross over the trailing 30
// days ending on A, and gross, net and count over the range.
type usageFacts struct {
	TrailingGross                    int64
	RangeGross, RangeNet, RangeCount int64
}

// Rows of the summary's queries, each with its customer. Instants stay epoch seconds and event keys
// (eventFromKey) until the customer is evaluated: tens of thousands of rows are read per request.
type (
	summaryChargeRow struct {
		customer     customerHash
		next         rowRef // the customer's next charge (join)
		derived      bool   // the row carries its states; otherwise they come from fallbackRow
		charge       Charge
		lastA, lastB uint64 // the last state event before end(A), end(B)
		first        uint32 // first activation
		unA, unB     uint32 // the customer's last uninstall before end(A), end(B)
		gone         uint32 // when the charge ended for good (ChargeFacts.Ended)
	}
	// fallbackRow is a charge's state facts read from the events (charge "": the customer's
	// uninstalls, as the keys of lastA and lastB, and all of them).
	fallbackRow struct {
		customer     customerHash
		charge       string
		lastA, lastB uint64
		first        uint32
		ownEnd       uint32
		uninstalls   []uint32
	}
	paymentRow struct {
		customer customerHash
		next     rowRef
		charge   string
		currency string
		a, b     uint32
	}
	usageRow struct {
		customer customerHash
		next     rowRef
		currency string
		usage    usageFacts
	}
)

// rowRef names a row of a chunks: 1 + its index, 0 for none.
type rowRef int32

// chunks holds rows in fixed-size chunks, so that appending never copies a row.
type chunks[T any] struct {
	all [][]T
	n   int
}

const chunkRows = 4096

// next returns a new zero row and its reference.
func (c *chunks[T]) next() (*T, rowRef) {
	if len(c.all) == 0 || len(c.all[len(c.all)-1]) == chunkRows {
		c.all = append(c.all, make([]T, 0, chunkRows))
	}
	last := &c.all[len(c.all)-1]
	*last = (*last)[:len(*last)+1]
	c.n++
	return &(*last)[len(*last)-1], rowRef(c.n)
}

func (c *chunks[T]) at(r rowRef) *T { return &c.all[(r-1)/chunkRows][(r-1)%chunkRows] }

// summaryFacts are the compact facts the summary and the focused metrics are computed from, as read
// (each query fills its own part, concurrently).
type summaryFacts struct {
	charges  chunks[summaryChargeRow]
	fallback []fallbackRow
	payments chunks[paymentRow] // the charges' payments (selectChargeFacts)
	usage    chunks[usageRow]
	// usageTotals are the usage facts per currency, of the customers in scope, when the
	// customers' own (usage) are not read.
	usageTotals []usageRow
}

// loadSummaryFacts reads the per-customer facts concurrently; each query reduces in ClickHouse. The
// customers' usage is read only when byCustomer is set (else readUsageTotals reads it per currency).
func (s *Store) loadSummaryFacts(ctx context.Context, sc Scope, d summaryDates, rng Range, byCustomer bool) (*summaryFacts, error) {
	f := &summaryFacts{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		derived, err := s.readSummaryCharges(gctx, sc, d, &f.charges, &f.payments)
		if err == nil && !derived {
			f.fallback, err = s.readStateFallback(gctx, sc, d)
		}
		return err
	})
	if byCustomer {
		g.Go(func() error { return s.readUsage(gctx, sc, d, rng, &f.usage) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return f, nil
}

// summaryCustomer is one customer's rows, linked, so that evaluating it needs no lookup.
type summaryCustomer struct {
	key                      customerHash
	charges, payments, usage rowRef
	unA, unB                 uint32 // the last uninstall before end(A), end(B)
}

// join links the rows of each customer, one index lookup per row, and sets the states of the
// charges whose rows do not carry them from the fallback rows.
func (f *summaryFacts) join() []summaryCustomer {
	out := make([]summaryCustomer, 0, max(f.charges.n, f.payments.n))
	index := newCustomerIndex(cap(out))
	get := func(k customerHash) *summaryCustomer {
		i, ok := index.find(k, int32(len(out)))
		if !ok {
			out = append(out, summaryCustomer{key: k})
		}
		return &out[i]
	}
	type chargeRef struct {
		customer customerHash
		charge   string
	}
	var (
		pending    map[chargeRef]*summaryChargeRow // charges whose states come from the events
		uninstalls map[customerHash][]uint32       // of the customers of those charges
		evented    map[*summaryChargeRow]uint32    // those charges with events: their own ending
	)
	for ref := rowRef(1); int(ref) <= f.charges.n; ref++ {
		r := f.charges.at(ref)
		c := get(r.customer)
		r.next, c.charges = c.charges, ref
		c.unA, c.unB = max(c.unA, r.unA), max(c.unB, r.unB)
		if !r.derived {
			if pending == nil {
				pending = map[chargeRef]*summaryChargeRow{}
			}
			pending[chargeRef{r.customer, r.charge.ID}] = r
		}
	}
	for _, r := range f.fallback {
		i, ok := index.find(r.customer, -1)
		if !ok {
			continue // none of its charges can be in effect
		}
		if c := &out[i]; r.charge == "" {
			c.unA, c.unB = max(c.unA, uint32(r.lastA/eventKeyBase)), max(c.unB, uint32(r.lastB/eventKeyBase))
			if uninstalls == nil {
				uninstalls = map[customerHash][]uint32{}
			}
			uninstalls[r.customer] = append(uninstalls[r.customer], r.uninstalls...)
		} else if ch := pending[chargeRef{r.customer, r.charge}]; ch != nil {
			ch.lastA, ch.lastB, ch.first = r.lastA, r.lastB, r.first
			if evented == nil {
				evented = map[*summaryChargeRow]uint32{}
			}
			evented[ch] = r.ownEnd
		}
	}
	for ref, ch := range pending {
		ownEnd, hasEvents := evented[ch]
		if g := endedAt(unix(ownEnd), unix(ch.first), unixAll(uninstalls[ref.customer]), ch.charge.EndedAt, hasEvents); !g.IsZero() {
			ch.gone = uint32(g.Unix())
		}
	}
	for ref := rowRef(1); int(ref) <= f.payments.n; ref++ {
		r := f.payments.at(ref)
		c := get(r.customer)
		r.next, c.payments = c.payments, ref
	}
	for ref := rowRef(1); int(ref) <= f.usage.n; ref++ {
		r := f.usage.at(ref)
		c := get(r.customer)
		r.next, c.usage = c.usage, ref
	}
	return out
}

// customerIndex maps customers to their position in join's slice: an open-addressing table that
// uses the key's first bytes as the hash (they are SHA-256 output), cheaper than a Go map for the
// few hundred thousand lookups of a summary.
type customerIndex struct {
	keys []customerHash
	pos  []int32 // position + 1; 0 = empty slot
	mask uint64
}

func newCustomerIndex(n int) *customerIndex {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	return &customerIndex{keys: make([]customerHash, size), pos: make([]int32, size), mask: uint64(size - 1)}
}

// find returns k's position; when k is absent it is added at position next (unless next < 0), and
// ok is false.
func (x *customerIndex) find(k customerHash, next int32) (pos int32, ok bool) {
	if 2*int(next) >= len(x.pos) {
		x.grow()
	}
	for i := binary.LittleEndian.Uint64(k[:8]) & x.mask; ; i = (i + 1) & x.mask {
		switch {
		case x.pos[i] == 0:
			if next >= 0 {
				x.keys[i], x.pos[i] = k, next+1
			}
			return next, false
		case x.keys[i] == k:
			return x.pos[i] - 1, true
		}
	}
}

func (x *customerIndex) grow() {
	old := *x
	*x = *newCustomerIndex(len(old.pos))
	for i, p := range old.pos {
		if p != 0 {
			x.find(old.keys[i], p-1)
		}
	}
}

// billingBuffers are reused across customers: a customer's billing facts on A and on B, and the
// evaluations' scratch.
type billingBuffers struct {
	chargesA, chargesB   []ChargeFacts
	paymentsA, paymentsB Payments
	scratchA, scratchB   []ChargeOn
}

// billing fills the buffers with the customer's facts on A and on B.
func (f *summaryFacts) billing(c *summaryCustomer, buf *billingBuffers) (onA, onB CustomerBilling) {
	buf.chargesA, buf.chargesB = buf.chargesA[:0], buf.chargesB[:0]
	for ref := c.charges; ref != 0; {
		r := f.charges.at(ref)
		first, gone := unix(r.first), unix(r.gone)
		buf.chargesA = append(buf.chargesA, ChargeFacts{Charge: &r.charge, LastOwn: eventFromKey(r.lastA), FirstActivated: first, Ended: gone})
		buf.chargesB = append(buf.chargesB, ChargeFacts{Charge: &r.charge, LastOwn: eventFromKey(r.lastB), FirstActivated: first, Ended: gone})
		ref = r.next
	}
	buf.paymentsA, buf.paymentsB = buf.paymentsA[:0], buf.paymentsB[:0]
	for ref := c.payments; ref != 0; {
		r := f.payments.at(ref)
		buf.paymentsA = buf.paymentsA.with(r.charge, r.currency, unix(r.a))
		buf.paymentsB = buf.paymentsB.with(r.charge, r.currency, unix(r.b))
		ref = r.next
	}
	return CustomerBilling{Charges: buf.chargesA, LastUninstall: unix(c.unA), Paid: buf.paymentsA},
		CustomerBilling{Charges: buf.chargesB, LastUninstall: unix(c.unB), Paid: buf.paymentsB}
}

// readSummaryCharges reads the charges into out and their payments into paid; derived is false
// when a row does not carry its states (they are then read from the events).
func (s *Store) readSummaryCharges(ctx context.Context, sc Scope, d summaryDates, out *chunks[summaryChargeRow],
	paid *chunks[paymentRow]) (derived bool, err error) {
	endA, endB := uint64(epoch(d.A.End())), uint64(epoch(d.B.End()))
	// B is never after A: every 30-day plan's evidence on either date lies in [end(B) − 45 days,
	// end(A)); an annual charge's in the year before that.
	recentFrom := uint32(epoch(d.B.End().AddDate(0, 0, -monthlyEvidenceDays)))
	annualFrom := uint32(epoch(d.B.End().AddDate(0, 0, -annualEvidenceDays)))
	rows, err := s.conn.Query(ctx, selectChargeFacts, sc.WorkspaceID, sc.apps(), epochDay(d.B.End()))
	if err != nil {
		return false, fmt.Errorf("read charges: %w", err)
	}
	defer rows.Close()
	derived = true
	var (
		row                        summaryChargeRow
		arrays                     chargeArrays
		text                       string
		annual, frozen, states     uint8
		trial                      uint16
		accepted, activated, ended uint32
	)
	for rows.Next() {
		row = summaryChargeRow{}
		c := &row.charge
		if err := rows.Scan(&row.customer, &c.AmountCents, &annual, &frozen, &trial, &accepted, &activated, &ended, &states,
			&text); err != nil {
			return false, fmt.Errorf("read charges: %w", err)
		}
		c.Currency, c.ID = arrays.parseFacts(text)
		row.derived = states == 1
		row.lastA, row.lastB = lastBefore(arrays.events, endA*eventKeyBase), lastBefore(arrays.events, endB*eventKeyBase)
		row.unA, row.unB = lastBefore(arrays.uninstalls, uint32(endA)), lastBefore(arrays.uninstalls, uint32(endB))
		row.first, row.gone = arrays.ends(ended)
		if !summaryCandidate(&row, annual == 1, activated, ended, endA, endB) {
			continue
		}
		c.Kind, c.TrialDays = "subscription", int(trial)
		paidFrom := recentFrom
		if annual == 1 {
			c.Interval, paidFrom = Annual, annualFrom
		}
		if frozen == 1 {
			c.Status = "frozen"
		}
		c.AcceptedAt, c.ActivatedAt, c.EndedAt = unix(accepted), unix(activated), unix(ended)
		derived = derived && row.derived
		r, _ := out.next()
		*r = row
		for i, at := range arrays.payments {
			if at < paidFrom || uint64(at) >= endA {
				continue
			}
			p, _ := paid.next()
			p.customer, p.charge, p.currency, p.a = r.customer, c.ID, c.Currency, at
			if len(arrays.currencies) > 0 {
				p.currency = arrays.currencies[i]
			}
			if uint64(at) < endB {
				p.b = at
			}
		}
	}
	return derived, rows.Err()
}

func (s *Store) readStateFallback(ctx context.Context, sc Scope, d summaryDates) ([]fallbackRow, error) {
	rows, err := s.conn.Query(ctx, selectStateFallback, epoch(d.A.End()), epoch(d.B.End()), sc.WorkspaceID, sc.apps(),
		sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read charge states from events: %w", err)
	}
	defer rows.Close()
	var out []fallbackRow
	for rows.Next() {
		var r fallbackRow
		if err := rows.Scan(&r.customer, &r.charge, &r.lastA, &r.lastB, &r.first, &r.ownEnd, &r.uninstalls); err != nil {
			return nil, fmt.Errorf("read charge states from events: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) readUsage(ctx context.Context, sc Scope, d summaryDates, rng Range, out *chunks[usageRow]) error {
	trailing, from := epochDay(d.A.AddDays(-29).Start()), epochDay(rng.From.Start())
	rows, err := s.conn.Query(ctx, selectUsageFacts, trailing, from, from, from, sc.WorkspaceID, sc.apps(), min(trailing, from),
		epochDay(d.A.End()))
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, _ := out.next()
		var n uint64
		if err := rows.Scan(&r.customer, &r.currency, &r.usage.TrailingGross, &r.usage.RangeGross, &r.usage.RangeNet, &n); err != nil {
			return fmt.Errorf("read usage: %w", err)
		}
		r.usage.RangeCount = int64(n)
	}
	return rows.Err()
}

// readUsageTotals reads the usage facts per currency (usageTotalsHead) of the customers the scope
// admits into out, whose rows name no customer.
func (s *Store) readUsageTotals(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, d summaryDates, rng Range, out *[]usageRow) error {
	trailing, from := epochDay(d.A.AddDays(-29).Start()), epochDay(rng.From.Start())
	q := new(stmt).add(usageTotalsHead, trailing, from, from, from, sc.WorkspaceID, sc.apps(), min(trailing, from), epochDay(d.A.End()))
	if !scopeFilterByID(q, cs, ex, sc) {
		return nil
	}
	text, args := q.add(usageTotalsTail).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r usageRow
			n uint64
		)
		if err := rows.Scan(&r.currency, &r.usage.TrailingGross, &r.usage.RangeGross, &r.usage.RangeNet, &n); err != nil {
			return fmt.Errorf("read usage: %w", err)
		}
		r.usage.RangeCount = int64(n)
		*out = append(*out, r)
	}
	return rows.Err()
}

func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// unixAll is unix of every instant.
func unixAll(ts []uint32) []time.Time {
	out := make([]time.Time, len(ts))
	for i, t := range ts {
		out[i] = unix(t)
	}
	return out
}
