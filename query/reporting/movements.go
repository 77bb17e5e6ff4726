package reporting

import (
	"context"
	"encoding/hex"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// MRR movements (docs/METRICS.md 3.14): per currency and interval, how subscription MRR moved from
// the interval's opening (the date before its first date) to its last date, customer by customer,
// in the ChartMogul vocabulary.

// Movement types.
const (
	MoveNew          = "new"
	MoveExpansion    = "expansion"
	MoveContraction  = "contraction"
	MoveChurn        = "churn"
	MoveReactivation = "reactivation"
)

// MovementTypes in the order of the documentation.
var MovementTypes = []string{MoveNew, MoveExpansion, MoveContraction, MoveChurn, MoveReactivation}

// MovementBlock is one currency's movements in one interval. Amounts are positive; the invariant
// endMrrCents = startMrrCents + new + expansion + reactivation − contraction − churn holds exactly.
type MovementBlock struct {
	StartMRRCents        int64 `json:"startMrrCents"`
	EndMRRCents          int64 `json:"endMrrCents"`
	NewCents             int64 `json:"newCents"`
	ExpansionCents       int64 `json:"expansionCents"`
	ContractionCents     int64 `json:"contractionCents"`
	ChurnCents           int64 `json:"churnCents"`
	ReactivationCents    int64 `json:"reactivationCents"`
	NetCents             int64 `json:"netCents"`
	NewCustomers         int64 `json:"newCustomers"`
	ExpansionCustomers   int64 `json:"expansionCustomers"`
	ContractionCustomers int64 `json:"contractionCustomers"`
	ChurnedCustomers     int64 `json:"churnedCustomers"`
	ReactivatedCustomers int64 `json:"reactivatedCustomers"`
}

// MovementPeriod is one interval's movements per currency.
type MovementPeriod struct {
	PeriodFrom Date                     `json:"periodFrom"`
	Date       Date                     `json:"date"`
	ByCurrency map[string]MovementBlock `json:"byCurrency"`
}

// Movements is GET /api/v1/mrr-movements.
type Movements struct {
	Envelope
	Interval string           `json:"interval"`
	Basis    string           `json:"basis"`
	Periods  []MovementPeriod `json:"periods"`
}

// customerMove is one customer's movement in one currency between two points.
type customerMove struct {
	kind       string // "" when nothing moved
	start, end int64
}

// moveOf classifies a customer's subscription MRR in cur between the opening point (a) and the
// closing point (b); firstPaid is its first payment in cur (zero when none before the close).
func moveOf(a, b pointState, cur string, firstPaid, openEnd time.Time) customerMove {
	m := customerMove{}
	if a.Paying && a.Currency == cur {
		m.start = a.AMR
	}
	if b.Paying && b.Currency == cur {
		m.end = b.AMR
	}
	switch {
	case m.start == m.end:
	case m.start == 0:
		m.kind = MoveNew
		if !firstPaid.IsZero() && firstPaid.Before(openEnd) {
			m.kind = MoveReactivation
		}
	case m.end == 0:
		m.kind = MoveChurn
	case m.end > m.start:
		m.kind = MoveExpansion
	default:
		m.kind = MoveContraction
	}
	return m
}

// add counts a customer's move.
func (b *MovementBlock) add(m customerMove) {
	b.StartMRRCents += m.start
	b.EndMRRCents += m.end
	d := m.end - m.start
	switch m.kind {
	case MoveNew:
		b.NewCents, b.NewCustomers = b.NewCents+d, b.NewCustomers+1
	case MoveReactivation:
		b.ReactivationCents, b.ReactivatedCustomers = b.ReactivationCents+d, b.ReactivatedCustomers+1
	case MoveExpansion:
		b.ExpansionCents, b.ExpansionCustomers = b.ExpansionCents+d, b.ExpansionCustomers+1
	case MoveContraction:
		b.ContractionCents, b.ContractionCustomers = b.ContractionCents-d, b.ContractionCustomers+1
	case MoveChurn:
		b.ChurnCents, b.ChurnedCustomers = b.ChurnCents-d, b.ChurnedCustomers+1
	}
	b.NetCents = b.EndMRRCents - b.StartMRRCents
}

// movementFacts are the timeline facts with each customer's first payment per currency
// (timelineFacts.firstPaid).
type movementFacts struct {
	*timelineFacts
	ex   *exclusions
	view *syncView
}

// loadMovements reads the facts of movements at points. Computed every time (nothing kept, version
// ""), and charged as a computation (query/budget).
func (s *Store) loadMovements(ctx context.Context, sc Scope, points []Date) (*movementFacts, error) {
	return cachedAt(ctx, s, "", nil, func() (*movementFacts, error) { return s.readMovementFacts(ctx, sc, points) }, nil)
}

func (s *Store) readMovementFacts(ctx context.Context, sc Scope, points []Date) (*movementFacts, error) {
	f := &movementFacts{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		f.timelineFacts, err = s.loadTimelineWith(gctx, sc, points, usageNone, true)
		return
	})
	g.Go(func() (err error) { f.ex, err = s.readExclusions(gctx, sc); return })
	g.Go(func() (err error) { f.view, err = s.readSyncView(gctx, sc); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return f, nil
}

// eachMove sweeps every in-scope customer across the points and calls visit with its move in each
// currency it had MRR in at either end of an interval (i ≥ 1: the interval ending on points[i]).
func (f *movementFacts) eachMove(cs CustomerScope, points []Date, visit func(c *tlCustomer, i int, cur string, m customerMove)) {
	f.eachMoveOf(f.customers, cs, points, visit)
}

// eachMoveOf is eachMove over some of the customers. The opening ends are computed once, and a
// customer's first payments are looked up only for a move that starts from nothing (the one
// moveOf reads them for).
func (f *movementFacts) eachMoveOf(customers []*tlCustomer, cs CustomerScope, points []Date,
	visit func(c *tlCustomer, i int, cur string, m customerMove)) {
	states := make([]pointState, len(points))
	openEnds := make([]time.Time, len(points))
	for i := 1; i < len(points); i++ {
		openEnds[i] = points[i-1].End()
	}
	var buf sweepBuffers
	for _, c := range customers {
		if !f.ex.admits(cs, c.key) {
			continue
		}
		sweep(c, points, &buf, func(i int, st pointState) { states[i] = st })
		for i := 1; i < len(points); i++ {
			a, b := states[i-1], states[i]
			if !a.Paying && !b.Paying {
				continue
			}
			for _, cur := range movedCurrencies(a, b) {
				var first time.Time
				if !(a.Paying && a.Currency == cur) {
					first = f.firstPaid.of(c.key, cur)
				}
				visit(c, i, cur, moveOf(a, b, cur, first, openEnds[i]))
			}
		}
	}
}

// movedCurrencies are the currencies a customer had MRR in at a or b.
func movedCurrencies(a, b pointState) []string {
	switch {
	case a.Paying && b.Paying && a.Currency != b.Currency:
		return []string{a.Currency, b.Currency}
	case a.Paying:
		return []string{a.Currency}
	case b.Paying:
		return []string{b.Currency}
	}
	return nil
}

// MovementsRequest is an MRR-movements request, validated by the query edge.
type MovementsRequest struct {
	Request
	Interval string
}

// Movements computes the MRR movements of every interval of the range (METRICS 3.14) in one sweep.
func (s *Store) Movements(ctx context.Context, req MovementsRequest) (Movements, error) {
	periods, err := Periods(req.Range, req.Interval)
	if err != nil {
		return Movements{}, err
	}
	generatedAt := s.now().UTC()
	points := seriesPoints(req.Range, periods)
	f, err := s.loadMovements(ctx, req.Scope, points)
	if err != nil {
		return Movements{}, err
	}
	out := Movements{Envelope: s.envelope(req.Request, generatedAt, f.view, f.view.coverage(req.Range, false)), Interval: req.Interval,
		Basis: basisNRR}
	blocks := f.movementBlocks(req, points)
	currencies := map[string]bool{}
	for _, bs := range blocks {
		for cur := range bs {
			currencies[cur] = true
		}
	}
	out.Currencies = sortedKeys(currencies)
	out.MixedCurrencies = len(out.Currencies) > 1
	for i, p := range periods {
		mp := MovementPeriod{PeriodFrom: p.From, Date: p.To, ByCurrency: map[string]MovementBlock{}}
		for _, cur := range out.Currencies {
			if b := blocks[i+1][cur]; b != nil {
				mp.ByCurrency[cur] = *b
			} else {
				mp.ByCurrency[cur] = MovementBlock{}
			}
		}
		out.Periods = append(out.Periods, mp)
	}
	return out, nil
}

// seriesPoints are the opening date of the range, then every period's last date.
func seriesPoints(rng Range, periods []Range) []Date {
	points := make([]Date, 0, len(periods)+1)
	points = append(points, rng.From.AddDays(-1))
	for _, p := range periods {
		points = append(points, p.To)
	}
	return points
}

// publicID is a customer's public ID from its key.
func (k customerHash) publicID() string { return "cus_" + hex.EncodeToString(k[:]) }

// movementBlocks are the movements per point and currency (the requested currency only, when
// set), the customers swept in parallel parts whose blocks are then added.
func (f *movementFacts) movementBlocks(req MovementsRequest, points []Date) []map[string]*MovementBlock {
	customers := f.customers
	parts := make([][]map[string]*MovementBlock, min(runtime.GOMAXPROCS(0), 1+len(customers)/minCustomersPerPart))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(customers)*p/len(parts), len(customers)*(p+1)/len(parts)
		blocks := make([]map[string]*MovementBlock, len(points))
		parts[p] = blocks
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.eachMoveOf(customers[lo:hi], req.CustomerScope, points, func(_ *tlCustomer, i int, cur string, m customerMove) {
				if req.Currency != "" && cur != req.Currency {
					return
				}
				if blocks[i] == nil {
					blocks[i] = map[string]*MovementBlock{}
				}
				b := blocks[i][cur]
				if b == nil {
					b = &MovementBlock{}
					blocks[i][cur] = b
				}
				b.add(m)
			})
		}()
	}
	wg.Wait()
	out := parts[0]
	for _, part := range parts[1:] {
		for i, bs := range part {
			for cur, b := range bs {
				if out[i] == nil {
					out[i] = map[string]*MovementBlock{}
				}
				if o := out[i][cur]; o != nil {
					o.merge(b)
				} else {
					out[i][cur] = b
				}
			}
		}
	}
	return out
}

// merge adds another part's customers' movements.
func (b *MovementBlock) merge(o *MovementBlock) {
	b.StartMRRCents += o.StartMRRCents
	b.EndMRRCents += o.EndMRRCents
	b.NewCents, b.NewCustomers = b.NewCents+o.NewCents, b.NewCustomers+o.NewCustomers
	b.ExpansionCents, b.ExpansionCustomers = b.ExpansionCents+o.ExpansionCents, b.ExpansionCustomers+o.ExpansionCustomers
	b.ContractionCents, b.ContractionCustomers = b.ContractionCents+o.ContractionCents, b.ContractionCustomers+o.ContractionCustomers
	b.ChurnCents, b.ChurnedCustomers = b.ChurnCents+o.ChurnCents, b.ChurnedCustomers+o.ChurnedCustomers
	b.ReactivationCents, b.ReactivatedCustomers = b.ReactivationCents+o.ReactivationCents, b.ReactivatedCustomers+o.ReactivatedCustomers
	b.NetCents = b.EndMRRCents - b.StartMRRCents
}
