package reporting

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// attributedCustomer is one customer row with what its first link says (METRICS 10.1).
type attributedCustomer struct {
	key       customerHash
	app       string
	domain    string    // lower case
	installed time.Time // first install; zero when unknown
	linked    bool      // the shop has a first link in its app
	touched   bool      // that acquisition has stored browser history
	firstSeen time.Time // its first browser event
	grp       string    // its channel value
}

// acquisitionRef names an acquisition: its ID within the source that captured it.
type acquisitionRef struct{ source, id string }

// touch is an acquisition's merged first touch.
type touch struct {
	app       string
	firstSeen time.Time
	grp       string
}

// revenueRow is one customer's transactions in one currency (selectCustomerRevenue): its net
// revenue over the range and its usage MRR on asOf, each with how many transactions are behind it.
type revenueRow struct {
	customer   customerHash
	currency   string
	inRange    uint64 // transactions in the range
	net        int64
	usageSales uint64 // usage sales in the window read
	usageMRR   int64  // gross of its usage sales in the 30 days ending on asOf
}

// funnelCount is the funnel events attributed to one acquisition (ref.id "": to none).
type funnelCount struct {
	ref                         acquisitionRef
	installs, trials, converted int64
}

// trackingFacts are the tracking side of an attribution request, as read.
type trackingFacts struct {
	customers    []attributedCustomer
	links        map[[2]string]acquisitionRef // (app, shop domain) → its first link
	touches      map[acquisitionRef]touch     // of the links and of the funnel events
	funnel       []funnelCount
	acquisitions map[string]int64     // per channel, first seen in the range
	since        map[string]time.Time // per app, its earliest stored browser event
}

// readTracking reads the tracking facts concurrently, one table per query.
func (s *Store) readTracking(ctx context.Context, sc Scope, group string, r Range) (*trackingFacts, error) {
	t := &trackingFacts{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { t.customers, err = s.readAttributionCustomers(gctx, sc); return })
	g.Go(func() (err error) { t.links, err = s.readShopLinks(gctx, sc); return })
	var touched []touchRow
	g.Go(func() (err error) { touched, t.acquisitions, err = s.readTouches(gctx, sc, group, r); return })
	g.Go(func() (err error) { t.funnel, err = s.readAttributionFunnel(gctx, sc, r); return })
	g.Go(func() (err error) { t.since, err = s.readTrackingSince(gctx, sc); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Only the touches of the links and of the funnel events are looked up; the rest were read to be
	// counted, and a map of every one of them cost more than the read (a profile: 22 % of the process).
	needed := make(map[acquisitionRef]bool, len(t.links)+len(t.funnel))
	for _, ref := range t.links {
		needed[ref] = true
	}
	for _, f := range t.funnel {
		needed[f.ref] = true
	}
	t.touches = make(map[acquisitionRef]touch, len(needed))
	for _, tr := range touched {
		if needed[tr.ref] {
			t.touches[tr.ref] = tr.touch
		}
	}
	for i := range t.customers {
		c := &t.customers[i]
		ref, ok := t.links[[2]string{c.app, c.domain}]
		if !ok {
			continue
		}
		c.linked = true
		if tc, ok := t.touches[ref]; ok {
			c.touched, c.firstSeen, c.grp = true, tc.firstSeen, tc.grp
		}
	}
	return t, nil
}

func (s *Store) readTrackingSince(ctx context.Context, sc Scope) (map[string]time.Time, error) {
	rows, err := s.conn.Query(ctx, selectTrackingSince, sc.WorkspaceID, sc.apps(), sc.WorkspaceID, sc.apps())
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

func (s *Store) readAttributionCustomers(ctx context.Context, sc Scope) ([]attributedCustomer, error) {
	rows, err := s.conn.Query(ctx, selectAttributionCustomers, sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read attributed customers: %w", err)
	}
	defer rows.Close()
	var out []attributedCustomer
	for rows.Next() {
		var (
			c         attributedCustomer
			installed uint32
		)
		if err := rows.Scan(&c.key, &c.app, &c.domain, &installed); err != nil {
			return nil, fmt.Errorf("read attributed customers: %w", err)
		}
		c.installed = unix(installed)
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *Store) readShopLinks(ctx context.Context, sc Scope) (map[[2]string]acquisitionRef, error) {
	rows, err := s.conn.Query(ctx, selectShopLinks, sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read shop links: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]acquisitionRef{}
	for rows.Next() {
		var (
			app, domain string
			ref         acquisitionRef
		)
		if err := rows.Scan(&app, &domain, &ref.source, &ref.id); err != nil {
			return nil, fmt.Errorf("read shop links: %w", err)
		}
		out[[2]string{app, domain}] = ref
	}
	return out, rows.Err()
}

// touchRow is one acquisition's merged first touch as read.
type touchRow struct {
	ref acquisitionRef
	touch
}

// readTouches reads the first touches the response needs (touchesNeeded) and counts, per channel,
// the acquisitions first seen in r.
func (s *Store) readTouches(ctx context.Context, sc Scope, group string, r Range) ([]touchRow, map[string]int64, error) {
	ws, apps := sc.WorkspaceID, sc.apps()
	from, to := r.From.Start(), r.To.End()
	month := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	rows, err := s.conn.Query(ctx, attributionTouchesHead+group+attributionTouchesMiddle+touchesNeeded,
		ws, apps, ws, apps, epoch(from), epoch(to), ws, apps, month.Format(time.DateOnly), ws, apps)
	if err != nil {
		return nil, nil, fmt.Errorf("read first touches: %w", err)
	}
	defer rows.Close()
	var out []touchRow
	seen := map[string]int64{}
	for rows.Next() {
		var (
			tr    touchRow
			first uint32
		)
		if err := rows.Scan(&tr.app, &tr.ref.source, &tr.ref.id, &first, &tr.grp); err != nil {
			return nil, nil, fmt.Errorf("read first touches: %w", err)
		}
		tr.firstSeen = unix(first)
		out = append(out, tr)
		if !tr.firstSeen.Before(from) && tr.firstSeen.Before(to) {
			seen[tr.grp]++
		}
	}
	return out, seen, rows.Err()
}

// readRevenue reads each customer's net revenue over r and usage MRR on r.To (selectCustomerRevenue).
func (s *Store) readRevenue(ctx context.Context, sc Scope, r Range) ([]revenueRow, error) {
	from, trailing := r.From.Start(), r.To.AddDays(-29).Start()
	rows, err := s.conn.Query(ctx, selectCustomerRevenue, epochDay(from), epochDay(from), epochDay(trailing), sc.WorkspaceID, sc.apps(),
		epochDay(earlierOf(from, trailing)), epochDay(r.To.End()))
	if err != nil {
		return nil, fmt.Errorf("read net revenue: %w", err)
	}
	defer rows.Close()
	var out []revenueRow
	for rows.Next() {
		var n revenueRow
		if err := rows.Scan(&n.customer, &n.currency, &n.inRange, &n.net, &n.usageSales, &n.usageMRR); err != nil {
			return nil, fmt.Errorf("read net revenue: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func (s *Store) readAttributionFunnel(ctx context.Context, sc Scope, r Range) ([]funnelCount, error) {
	ws := sc.WorkspaceID
	rows, err := s.conn.Query(ctx, selectAttributionFunnel, ws, sc.apps(), epoch(r.From.Start()), epoch(r.To.End()), ws, ws)
	if err != nil {
		return nil, fmt.Errorf("read attribution funnel: %w", err)
	}
	defer rows.Close()
	var out []funnelCount
	for rows.Next() {
		var (
			f                funnelCount
			ins, trial, conv uint64
		)
		if err := rows.Scan(&f.ref.source, &f.ref.id, &ins, &trial, &conv); err != nil {
			return nil, fmt.Errorf("read attribution funnel: %w", err)
		}
		f.installs, f.trials, f.converted = int64(ins), int64(trial), int64(conv)
		out = append(out, f)
	}
	return out, rows.Err()
}

// addCustomers evaluates every in-scope customer on asOf as the summary does (summary.go,
// currencySums.add: the qualifying subscription's amrCents and currency, the usage of the trailing
// 30 days per currency) and adds it, with its net revenue, to the row of its first touch. Every
// customer the summary counts is in exactly one row, so the rows add up to the summary's figures.
// The usage comes with the net revenue (revenue): a customer with a usage sale in the window the
// summary reads counts in its row whether or not it has MRR on asOf, as in the summary's facts.
func (t *attributionTable) addCustomers(f *summaryFacts, ex *exclusions, asOf Date, customers []attributedCustomer,
	revenue []revenueRow, since map[string]time.Time) {
	index := make(map[customerHash]int32, len(customers))
	for i := range customers {
		index[customers[i].key] = int32(i)
	}
	rows := make([]*AttributionRow, len(customers)) // each customer's row, decided once
	orphans := map[customerHash]bool{}              // customers without a customer row, counted once
	row := func(k customerHash) *AttributionRow {
		i, ok := index[k]
		if !ok {
			r := t.special[RowUnattributed]
			if !orphans[k] {
				orphans[k] = true
				r.Customers++
			}
			return r
		}
		if rows[i] == nil {
			rows[i] = t.customerRow(&customers[i], since)
			rows[i].Customers++
		}
		return rows[i]
	}
	for i := range customers {
		if ex.admits(ScopeIncluded, customers[i].key) {
			row(customers[i].key)
		}
	}
	joined := f.join()
	paying := evaluateAll(f, joined, ex, asOf)
	for i := range joined {
		c := &joined[i]
		if !ex.admits(ScopeIncluded, c.key) {
			continue
		}
		r := row(c.key)
		if ev := paying[i]; ev.currency != "" {
			r.PayingCustomers++
			m := r.money(ev.currency)
			m.PayingCustomers++
			m.SubscriptionMRRCents += ev.amr
			m.MRRCents += ev.amr
		}
	}
	for _, n := range revenue {
		if (n.inRange == 0 && n.usageSales == 0) || !ex.admits(ScopeIncluded, n.customer) {
			continue // only transactions before the range that are not usage sales: nothing of this customer
		}
		r := row(n.customer)
		if n.inRange > 0 {
			r.money(n.currency).NetRevenueCents += n.net
		}
		if n.usageMRR != 0 { // else a usage sale in the range only: no usage MRR on asOf
			m := r.money(n.currency)
			m.UsageMRRCents += n.usageMRR
			m.MRRCents += n.usageMRR
		}
	}
}

// payingOn is a customer's qualifying subscription on a date: its currency and amrCents (currency
// "" when the customer is not paying).
type payingOn struct {
	currency string
	amr      int64
}

// evaluateAll evaluates the in-scope customers with charges on d (METRICS 2.4), in parallel parts
// as computeBlocks does: by then ClickHouse has answered, and the cores are free for this.
func evaluateAll(f *summaryFacts, customers []summaryCustomer, ex *exclusions, d Date) []payingOn {
	out := make([]payingOn, len(customers))
	parts := min(runtime.GOMAXPROCS(0), 1+len(customers)/minCustomersPerPart)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(customers)*p/parts, len(customers)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf billingBuffers
			for i := lo; i < hi; i++ {
				c := &customers[i]
				if c.charges == 0 || !ex.admits(ScopeIncluded, c.key) {
					continue
				}
				onA, _ := f.billing(c, &buf)
				ev := evaluate(d, onA, false, buf.scratchA)
				buf.scratchA = ev.NonTest
				if ev.Paying {
					out[i] = payingOn{currency: ev.Currency, amr: ev.AMRCents}
				}
			}
		}()
	}
	wg.Wait()
	return out
}
