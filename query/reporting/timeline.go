package reporting

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// The timeline engine: every customer's billing at N reporting dates (the points) from facts read
// once. The summary reads what two dates need (summary_facts.go); a series, MRR movements and
// cohorts need the same evaluation at every interval end, so the engine reads each charge's state
// events in full, the payments that can be evidence on some point, and the usage sales of every
// point's trailing window, then sweeps each customer across the points in order, evaluating it with
// billing.go's Evaluate (the rules of docs/METRICS.md 2.1–2.5, one implementation) only at the
// points where one of its facts changed. Cost: O(rows read + customers × points).

// tlCharge is one subscription charge with its whole event history.
type tlCharge struct {
	charge     Charge
	events     []Event     // its own state events, in replay order
	uninstalls []time.Time // its customer's uninstalls as its row (or the events) gave them, sorted
	first      time.Time   // first activation event
	ended      time.Time   // ChargeFacts.Ended
}

// tlPayments are one customer's payments for one charge in one currency, sorted.
type tlPayments struct {
	charge, currency string
	at               []time.Time
}

// tlUsage is one customer's usage sales in one currency per day (days since the epoch), sorted.
type tlUsage struct {
	currency   string
	days       []int32
	gross      []int64
	net, count []int64
}

// tlCustomer is one customer's facts.
type tlCustomer struct {
	key        customerHash
	charges    []tlCharge
	uninstalls []time.Time // sorted, every source
	payments   []tlPayments
	usage      []tlUsage
	pending    int32 // assembleTimeline's count of its charges
}

// timelineFacts are the facts of every customer of the covered apps with a subscription charge, a
// payment or a usage sale.
type timelineFacts struct {
	customers []*tlCustomer
	index     map[customerHash]*tlCustomer
	// usageTotals are the usage sales per currency and day of the customers in scope, read instead
	// of each customer's (tlCustomer.usage) by a series that reads no customer's usage on its own
	// (no concentration): a few hundred rows instead of one per customer and day with a sale.
	usageTotals []tlUsage
	// firstPaid is each customer's first payment per currency before the end of the last point,
	// when asked for (loadTimelineWith).
	firstPaid firstPayments
	slab      []tlCustomer // where get takes the next customer from
}

func (f *timelineFacts) get(k customerHash) *tlCustomer {
	c := f.index[k]
	if c == nil {
		// Customers come from slabs (a new one when the last is full, never grown, so the pointers
		// stay valid): one allocation per slab instead of one per customer.
		if len(f.slab) == cap(f.slab) {
			f.slab = make([]tlCustomer, 0, max(256, len(f.customers)/2))
		}
		f.slab = append(f.slab, tlCustomer{key: k})
		c = &f.slab[len(f.slab)-1]
		f.index[k] = c
		f.customers = append(f.customers, c)
	}
	return c
}

// timelineUsage is which usage sales loadTimeline reads.
type timelineUsage int

const (
	usageNone       timelineUsage = iota // movements and cohorts: subscription MRR only
	usageByCustomer                      // each customer's, per currency and day (concentration)
	usageScoped                          // none: the caller reads the scoped totals (readTimelineUsageTotals)
)

// loadTimeline reads the facts that decide billing on every date of points (sorted, at least one),
// with each customer's usage sales when usage is usageByCustomer.
func (s *Store) loadTimeline(ctx context.Context, sc Scope, points []Date, usage timelineUsage) (*timelineFacts, error) {
	return s.loadTimelineWith(ctx, sc, points, usage, false)
}

// loadTimelineWith is loadTimeline, with each customer's first payment per currency
// (timelineFacts.firstPaid) read in the same pass as the payments when firstPaid is set.
func (s *Store) loadTimelineWith(ctx context.Context, sc Scope, points []Date, usage timelineUsage, firstPaid bool) (*timelineFacts, error) {
	first, last := points[0], points[len(points)-1]
	var (
		charges  [][]tlRawCharge
		fallback []tlFallbackRow
		payments [][]tlPaymentRow
		sales    []tlUsageRow
	)
	var firsts firstPayments
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		var derived bool
		end := first.End()
		charges, payments, derived, err = s.readTimelineFactParts(gctx, sc, first, last.End(), end.AddDate(0, 0, -monthlyEvidenceDays),
			end.AddDate(0, 0, -annualEvidenceDays))
		if err == nil && !derived {
			fallback, err = s.readTimelineFallback(gctx, sc)
		}
		return err
	})
	if firstPaid {
		g.Go(func() (err error) { firsts, err = s.readFirstPaid(gctx, sc, last.End()); return err })
	}
	if usage == usageByCustomer {
		g.Go(func() (err error) {
			sales, err = s.readTimelineUsage(gctx, sc, first.AddDays(-29).Start(), last.End())
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	f := assembleTimeline(charges, fallback, payments, sales)
	f.firstPaid = firsts
	return f, nil
}

// Rows as read.
type (
	tlRawCharge struct {
		customer   customerHash
		charge     Charge
		derived    bool
		keys       []uint64
		uninstalls []uint32
	}
	tlFallbackRow struct {
		customer customerHash
		charge   string
		keys     []uint64
	}
	tlPaymentRow struct {
		customer         customerHash
		charge, currency string
		at               []uint32
	}
	tlUsageRow struct {
		customer   customerHash
		currency   string
		day        uint32
		gross, net int64
		count      uint64
	}
)

// sortedTimes sorts and de-duplicates instants in place.
func sortedTimes(ts []time.Time) []time.Time {
	slices.SortFunc(ts, time.Time.Compare)
	return slices.CompactFunc(ts, time.Time.Equal)
}

// sortUsage orders a customer's usage days.
func sortUsage(u *tlUsage) {
	idx := make([]int, len(u.days))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(u.days[a]) - int(u.days[b]) })
	days, gross, net, count := make([]int32, len(idx)), make([]int64, len(idx)), make([]int64, len(idx)), make([]int64, len(idx))
	for i, j := range idx {
		days[i], gross[i], net[i], count[i] = u.days[j], u.gross[j], u.net[j], u.count[j]
	}
	u.days, u.gross, u.net, u.count = days, gross, net, count
}

// readTimelineFactParts is readTimelineFacts for two halves of the covered apps, concurrently, when
// there are several: decoding the rows is most of the read's time (the driver decodes the state
// arrays through reflection), and each half reads only its apps' key ranges, so ClickHouse does
// the same work as for one read.
func (s *Store) readTimelineFactParts(ctx context.Context, sc Scope, first Date, to, recentFrom, annualFrom time.Time) (
	[][]tlRawCharge, [][]tlPaymentRow, bool, error) {
	if len(sc.AppIDs) < 2 {
		charges, paid, derived, err := s.readTimelineFacts(ctx, sc, first, to, recentFrom, annualFrom)
		return [][]tlRawCharge{charges}, [][]tlPaymentRow{paid}, derived, err
	}
	half := len(sc.AppIDs) / 2
	parts := []Scope{{sc.WorkspaceID, sc.AppIDs[:half]}, {sc.WorkspaceID, sc.AppIDs[half:]}}
	var (
		charges [2][]tlRawCharge
		paid    [2][]tlPaymentRow
		derived [2]bool
	)
	g, gctx := errgroup.WithContext(ctx)
	for i, part := range parts {
		g.Go(func() (err error) {
			charges[i], paid[i], derived[i], err = s.readTimelineFacts(gctx, part, first, to, recentFrom, annualFrom)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, false, err
	}
	return charges[:], paid[:], derived[0] && derived[1], nil
}

// readTimelineFacts reads the charges and their payments (selectChargeFacts); derived is false
// when a row does not carry its states. The rows' arrays are parsed into two shared backing arrays
// (each row's a capped window of them), and the slices start at the size of the same reading's last
// answer: a year of charges is tens of thousands of rows, whose growth and allocations cost more CPU
// than ClickHouse's read.
func (s *Store) readTimelineFacts(ctx context.Context, sc Scope, first Date, to, recentFrom, annualFrom time.Time) (
	out []tlRawCharge, paid []tlPaymentRow, derived bool, err error) {
	rows, err := s.conn.Query(ctx, selectChargeFacts, sc.WorkspaceID, sc.apps(), epochDay(first.End()))
	if err != nil {
		return nil, nil, false, fmt.Errorf("read charges: %w", err)
	}
	defer rows.Close()
	hint := s.sizeHint("timeline facts", sc)
	out, paid = make([]tlRawCharge, 0, hint), make([]tlPaymentRow, 0, hint)
	var (
		keyArena       = make([]uint64, 0, 4*hint)
		uninstallArena = make([]uint32, 0, hint)
		paidArena      = make([]uint32, 0, 4*hint)
		customer       customerHash
		text           string
		amount         int64
		annual, frozen uint8
		states         uint8
		trial          uint16
		accepted       uint32
		activated      uint32
		ended          uint32
		currencies     []string
		end            = uint32(epoch(to))
	)
	derived = true
	for rows.Next() {
		if err := rows.Scan(&customer, &amount, &annual, &frozen, &trial, &accepted, &activated, &ended, &states, &text); err != nil {
			return nil, nil, false, fmt.Errorf("read charges: %w", err)
		}
		f := splitFacts(text)
		// Built in place: a row is a few hundred bytes, and copying tens of thousands of them
		// into the slice cost more than parsing them.
		out = append(out, tlRawCharge{customer: customer, derived: states == 1})
		r := &out[len(out)-1]
		c := &r.charge
		c.ID, c.AmountCents, c.Currency = f.chargeID, amount, f.currency
		c.Kind, c.TrialDays = "subscription", int(trial)
		if annual == 1 {
			c.Interval = Annual
		}
		if frozen == 1 {
			c.Status = "frozen"
		}
		c.AcceptedAt, c.ActivatedAt, c.EndedAt = unix(accepted), unix(activated), unix(ended)
		derived = derived && r.derived
		n := len(keyArena)
		keyArena = parseKeys(f.events, keyArena)
		r.keys = keyArena[n:len(keyArena):len(keyArena)]
		n = len(uninstallArena)
		uninstallArena = parseInstants(f.uninstalls, uninstallArena)
		r.uninstalls = uninstallArena[n:len(uninstallArena):len(uninstallArena)]
		n = len(paidArena)
		paidFrom := uint32(epoch(recentFrom))
		if annual == 1 {
			paidFrom = uint32(epoch(annualFrom))
		}
		currencies = currencies[:0]
		if f.currencies != "" { // payments in another currency than the charge's: rare
			currencies = append(currencies, strings.Split(f.currencies, ",")...)
		}
		paidArena, currencies = paymentsIn(parseInstants(f.payments, paidArena), n, currencies, paidFrom, end)
		if at := paidArena[n:len(paidArena):len(paidArena)]; len(currencies) == 0 && len(at) > 0 {
			paid = append(paid, tlPaymentRow{customer: customer, charge: c.ID, currency: c.Currency, at: at})
		} else {
			paid = appendPayments(paid, customer, c.ID, at, currencies)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	s.keepSizeHint("timeline facts", sc, len(out))
	return out, paid, derived, nil
}

// appendPayments adds a charge's payments as one row per currency (nearly always one).
func appendPayments(paid []tlPaymentRow, k customerHash, charge string, at []uint32, currencies []string) []tlPaymentRow {
	for len(at) > 0 {
		cur := currencies[0]
		row := tlPaymentRow{customer: k, charge: charge, currency: cur}
		var restAt []uint32
		var restCur []string
		for i, t := range at {
			if currencies[i] == cur {
				row.at = append(row.at, t)
			} else {
				restAt, restCur = append(restAt, t), append(restCur, currencies[i])
			}
		}
		paid = append(paid, row)
		at, currencies = restAt, restCur
	}
	return paid
}

// readFirstPaid reads each customer's first payment per currency before to (selectFirstPayments).
func (s *Store) readFirstPaid(ctx context.Context, sc Scope, to time.Time) (firstPayments, error) {
	rows, err := s.conn.Query(ctx, selectFirstPayments, sc.WorkspaceID, sc.apps(), epoch(to))
	if err != nil {
		return nil, fmt.Errorf("read first payments: %w", err)
	}
	defer rows.Close()
	out := make(firstPayments, s.sizeHint("first payments", sc))
	for rows.Next() {
		var (
			k  firstPaymentKey
			at uint32
		)
		if err := rows.Scan(&k.customer, &k.currency, &at); err != nil {
			return nil, fmt.Errorf("read first payments: %w", err)
		}
		out[k] = at
	}
	s.keepSizeHint("first payments", sc, len(out))
	return out, rows.Err()
}

// firstPayments are the customers' first payments per currency (epoch seconds), in one map: a map
// per customer was tens of thousands of allocations per request.
type firstPayments map[firstPaymentKey]uint32

type firstPaymentKey struct {
	customer customerHash
	currency string
}

// of is c's first payment in cur, zero when none.
func (f firstPayments) of(c customerHash, cur string) time.Time {
	if at, ok := f[firstPaymentKey{c, cur}]; ok {
		return unix(at)
	}
	return time.Time{}
}

func (s *Store) readTimelineFallback(ctx context.Context, sc Scope) ([]tlFallbackRow, error) {
	rows, err := s.conn.Query(ctx, selectTimelineFallback, sc.WorkspaceID, sc.apps(), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read charge states from events: %w", err)
	}
	defer rows.Close()
	var out []tlFallbackRow
	for rows.Next() {
		var r tlFallbackRow
		if err := rows.Scan(&r.customer, &r.charge, &r.keys); err != nil {
			return nil, fmt.Errorf("read charge states from events: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) readTimelineUsage(ctx context.Context, sc Scope, from, to time.Time) ([]tlUsageRow, error) {
	rows, err := s.conn.Query(ctx, selectTimelineUsage, sc.WorkspaceID, sc.apps(), epochDay(from), epochDay(to))
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	var out []tlUsageRow
	for rows.Next() {
		var r tlUsageRow
		if err := rows.Scan(&r.customer, &r.currency, &r.day, &r.gross, &r.net, &r.count); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
