package reporting

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
)

// The analyst export: every customer's daily MRR and subscription MRR movements over the scope's
// whole history, computed by the timeline engine (timeline*.go) with the rules of the API, for the
// analyst views of daily MRR and movements (docs/ANALYSTS.md; written by processors/analystmrr).
// It only reads, like the rest of the package; the writer stores what it returns. Each day is the
// API's interval=day point of that date (end of the day, METRICS 3.13) and each movement the API's
// interval=day movement (METRICS 3.14), so sums over the export equal the API's answers.

// MRRSpan is a run of consecutive days [From, To] (both inclusive) on which a customer's MRR in one
// currency is constant: MRRCents = SubscriptionMRRCents + UsageMRRCents (METRICS 3.1–3.3), Paying
// its paying flag in that currency (2.4). Only days with MRR > 0 or paying make spans.
type MRRSpan struct {
	Currency                                      string
	From, To                                      Date
	MRRCents, SubscriptionMRRCents, UsageMRRCents int64
	Paying                                        bool
}

// MRRMovement is a customer's subscription MRR movement in one currency on one day (the day's end
// against the previous day's, METRICS 3.14): Kind one of MovementTypes, MovementCents = EndCents −
// StartCents (negative for contraction and churn).
type MRRMovement struct {
	Date                                Date
	Currency, Kind                      string
	MovementCents, StartCents, EndCents int64
}

// CustomerMRR is one customer's export: its IDs, whether the workspace excludes it from aggregates
// (the API's default customerScope leaves it out, METRICS 1.3), its spans and its movements, each
// sorted by currency and date.
type CustomerMRR struct {
	PublicID, CustomerID, ShopDomain string
	Excluded                         bool
	Spans                            []MRRSpan
	Movements                        []MRRMovement
}

// MRRExport says what an export covered: the days From … Through (From zero: the scope has no
// payment or usage sale, so no customer ever had MRR) and the customers visited.
type MRRExport struct {
	From, Through Date
	Customers     int
}

// BillingInputsVersion is the version of the tables the billing figures read (cache.go): it changes
// when platform data lands or an exclusion changes, and only then, so a caller can recompute an
// export only when it could differ. "" when it cannot be read.
func (s *Store) BillingInputsVersion(ctx context.Context) (string, error) {
	v, err := s.dataVersions(ctx, billingTables)
	if err != nil {
		return "", err
	}
	return v.of(billingTables), nil
}

// ExportCustomerMRR computes every customer's daily MRR and daily movements of the scope from the
// first day some customer can have MRR through the date through, and calls visit once per customer
// with any span or movement, in no particular order. Every customer is exported, excluded ones too
// (flagged). Not charged to a query budget: it is not a request.
func (s *Store) ExportCustomerMRR(ctx context.Context, sc Scope, through Date, visit func(CustomerMRR) error) (MRRExport, error) {
	start, err := s.mrrDataStart(ctx, sc)
	if err != nil || start.IsZero() || start.After(through) {
		return MRRExport{Through: through}, err
	}
	// The opening point is the day before the first payment or usage sale: nobody has MRR on it, so
	// the first day's movements are measured from zero, as an API range starting there would.
	points := make([]Date, 0, int(through.Start().Sub(start.Start()).Hours()/24)+2)
	for d := start.AddDays(-1); !d.After(through); d = d.AddDays(1) {
		points = append(points, d)
	}
	var (
		f     *movementFacts
		names map[customerHash][2]string
		usage []tlUsageRow
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { f, err = s.readMovementFacts(gctx, sc, points); return })
	g.Go(func() (err error) { names, err = s.readExportNames(gctx, sc); return })
	g.Go(func() (err error) {
		usage, err = s.readTimelineUsage(gctx, sc, points[0].AddDays(-29).Start(), through.End())
		return
	})
	if err := g.Wait(); err != nil {
		return MRRExport{}, err
	}
	setUsage(f.timelineFacts, usage)
	out := MRRExport{From: start, Through: through}
	x := newExporter(len(points))
	for _, c := range f.customers {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		cm := x.customer(c, f, points)
		if len(cm.Spans) == 0 && len(cm.Movements) == 0 {
			continue
		}
		n := names[c.key]
		cm.PublicID, cm.CustomerID, cm.ShopDomain, cm.Excluded = c.key.publicID(), n[0], n[1], f.ex.keys[c.key]
		if err := visit(cm); err != nil {
			return out, err
		}
		out.Customers++
	}
	return out, nil
}

// exporter holds the buffers reused across customers.
type exporter struct {
	buf    sweepBuffers
	states []pointState
	usage  map[string][]int64 // per currency, usage MRR per point
	spare  [][]int64
}

func newExporter(n int) *exporter {
	return &exporter{states: make([]pointState, n), usage: map[string][]int64{}}
}

// customer evaluates c on every point (sweep, usageAt: the series' own evaluation) and cuts its
// days into spans and movements.
func (x *exporter) customer(c *tlCustomer, f *movementFacts, points []Date) CustomerMRR {
	for cur, u := range x.usage {
		clear(u)
		x.spare = append(x.spare, u)
		delete(x.usage, cur)
	}
	sweep(c, points, &x.buf, func(i int, st pointState) { x.states[i] = st })
	usageAt(c, points, &x.buf, func(i int, cur string, gross int64) {
		u := x.usage[cur]
		if u == nil {
			if n := len(x.spare); n > 0 {
				u, x.spare = x.spare[n-1], x.spare[:n-1]
			} else {
				u = make([]int64, len(points))
			}
			x.usage[cur] = u
		}
		u[i] += gross
	})
	currencies := map[string]bool{}
	for cur := range x.usage {
		currencies[cur] = true
	}
	for _, st := range x.states[1:] {
		if st.Paying {
			currencies[st.Currency] = true
		}
	}
	var out CustomerMRR
	for _, cur := range sortedKeys(currencies) {
		out.Spans = x.spans(out.Spans, cur, points)
	}
	for i := 1; i < len(points); i++ {
		a, b := x.states[i-1], x.states[i]
		for _, cur := range movedCurrencies(a, b) {
			m := moveOf(a, b, cur, f.firstPaid.of(c.key, cur), points[i-1].End())
			if m.kind != "" {
				out.Movements = append(out.Movements, MRRMovement{Date: points[i], Currency: cur, Kind: m.kind,
					MovementCents: m.end - m.start, StartCents: m.start, EndCents: m.end})
			}
		}
	}
	slices.SortStableFunc(out.Movements, func(a, b MRRMovement) int { return cmpString(a.Currency, b.Currency) })
	return out
}

// spans appends the customer's spans in cur: the runs of days (points 1 … n−1) with the same
// subscription MRR, usage MRR and paying flag, left out where MRR is 0 and it is not paying.
func (x *exporter) spans(out []MRRSpan, cur string, points []Date) []MRRSpan {
	usage := x.usage[cur]
	open := false
	var sp MRRSpan
	for i := 1; i < len(points); i++ {
		st := x.states[i]
		day := MRRSpan{Currency: cur, From: points[i], To: points[i]}
		if st.Paying && st.Currency == cur {
			day.SubscriptionMRRCents, day.Paying = st.AMR, true
		}
		if usage != nil {
			day.UsageMRRCents = usage[i]
		}
		day.MRRCents = day.SubscriptionMRRCents + day.UsageMRRCents
		same := open && day.SubscriptionMRRCents == sp.SubscriptionMRRCents && day.UsageMRRCents == sp.UsageMRRCents &&
			day.Paying == sp.Paying
		switch {
		case same:
			sp.To = points[i]
		default:
			if open {
				out = append(out, sp)
			}
			sp, open = day, day.MRRCents != 0 || day.Paying
		}
	}
	if open {
		out = append(out, sp)
	}
	return out
}

// setUsage gives each customer exactly the usage sales read (per currency and day, as
// assembleTimeline groups them): movements need none, so what the movement facts carry is replaced
// whatever it is.
func setUsage(f *timelineFacts, rows []tlUsageRow) {
	for _, c := range f.customers {
		c.usage = nil
	}
	type ref struct {
		customer customerHash
		currency string
	}
	at := map[ref]int{}
	for _, r := range rows {
		c := f.get(r.customer)
		i, ok := at[ref{r.customer, r.currency}]
		if !ok {
			i = len(c.usage)
			c.usage = append(c.usage, tlUsage{currency: r.currency})
			at[ref{r.customer, r.currency}] = i
		}
		u := &c.usage[i]
		u.days, u.gross = append(u.days, int32(r.day)), append(u.gross, r.gross)
		u.net, u.count = append(u.net, r.net), append(u.count, int64(r.count))
	}
	for _, c := range f.customers {
		for i := range c.usage {
			sortUsage(&c.usage[i])
		}
	}
}

// mrrDataStart is the date of the scope's first payment or usage sale; zero when it has neither.
func (s *Store) mrrDataStart(ctx context.Context, sc Scope) (Date, error) {
	var payment, usage uint32
	if err := s.conn.QueryRow(ctx, selectMRRDataStart, sc.WorkspaceID, sc.apps(), sc.WorkspaceID, sc.apps()).Scan(&payment, &usage); err != nil {
		return Date{}, fmt.Errorf("read the first payment: %w", err)
	}
	first := payment
	if first == 0 || (usage != 0 && usage < first) {
		first = usage
	}
	if first == 0 {
		return Date{}, nil
	}
	return DateOf(unix(first)), nil
}

// readExportNames reads each customer's platform ID and shop domain.
func (s *Store) readExportNames(ctx context.Context, sc Scope) (map[customerHash][2]string, error) {
	rows, err := s.conn.Query(ctx, selectExportNames, sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read customers: %w", err)
	}
	defer rows.Close()
	out := map[customerHash][2]string{}
	for rows.Next() {
		var (
			k              customerHash
			id, shopDomain string
		)
		if err := rows.Scan(&k, &id, &shopDomain); err != nil {
			return nil, fmt.Errorf("read customers: %w", err)
		}
		out[k] = [2]string{id, shopDomain}
	}
	return out, rows.Err()
}
