package reporting

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// Intervals of a series (docs/METRICS.md 3.13).
const (
	IntervalDay   = "day"
	IntervalWeek  = "week"
	IntervalMonth = "month"
)

// MaxSeriesPoints bounds a series (METRICS 3.13): the daily points of the longest range the API
// takes (`to` 366 days after `from`, docs/METRICS.md 1.2), so every accepted range answers daily.
const MaxSeriesPoints = 367

// SeriesPoint is one interval of a series: its dates and the metric on its last date, per currency.
type SeriesPoint struct {
	Date       Date           `json:"date"`
	PeriodFrom Date           `json:"periodFrom"`
	ByCurrency map[string]any `json:"byCurrency"`
}

// SeriesResponse is GET /api/v1/metrics/{metric}?interval=…: the summary envelope, the metric, and
// one point per interval of the range.
type SeriesResponse struct {
	Envelope
	Metric      string        `json:"metric"`
	MetricBasis *string       `json:"metricBasis,omitempty"`
	Interval    string        `json:"interval"`
	Points      []SeriesPoint `json:"points"`
}

// Periods cuts a range into the intervals of a series (METRICS 3.13): days; ISO weeks, Monday to
// Sunday; calendar months; the first and last clipped to the range. An unknown interval or more
// than MaxSeriesPoints intervals is ErrInvalid.
func Periods(rng Range, interval string) ([]Range, error) {
	if !slices.Contains([]string{IntervalDay, IntervalWeek, IntervalMonth}, interval) {
		return nil, fmt.Errorf("%w: interval must be one of day, week, month", ErrInvalid)
	}
	var out []Range
	for start := rng.From; !start.After(rng.To); {
		var next Date // the first date after the interval
		switch t := start.Start(); interval {
		case IntervalDay:
			next = start.AddDays(1)
		case IntervalWeek:
			next = start.AddDays(7 - (int(t.Weekday())+6)%7)
		case IntervalMonth:
			next = Date{time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)}
		}
		end := next.AddDays(-1)
		if end.After(rng.To) {
			end = rng.To
		}
		if out = append(out, Range{From: start, To: end}); len(out) > MaxSeriesPoints {
			return nil, fmt.Errorf("%w: a %s series of %s … %s has more than %d points; use a coarser interval or a shorter range",
				ErrInvalid, interval, rng.From, rng.To, MaxSeriesPoints)
		}
		start = next
	}
	return out, nil
}

// seriesResult is what a series computes: each interval with the summary's currency blocks on its
// last date (the range sums over the interval), the sync view, and whether usage activity reads.
type seriesResult struct {
	periods []Range
	blocks  []map[string]CurrencyBlock // per period: exactly the currencies the summary of that range has
	view    *syncView
	loaded  bool // usage activity read (the summary's coverage.usageActivity.loaded)
}

// seriesResult computes every interval of the range in one sweep of the timeline engine
// (timeline.go), never one summary per point. Each interval's blocks equal those of the summary for
// the range [periodFrom, date] (TestTimelineEqualsSummary).
func (s *Store) seriesResult(ctx context.Context, req Request, interval string) (*seriesResult, error) {
	return s.seriesResultFor(ctx, req, interval, needsAll)
}

// seriesResultFor is seriesResult computing only what need says the caller reads.
func (s *Store) seriesResultFor(ctx context.Context, req Request, interval string, need timelineNeeds) (*seriesResult, error) {
	periods, err := Periods(req.Range, interval)
	if err != nil {
		return nil, err
	}
	// Computed every time (nothing kept, version ""), and charged as a computation (query/budget).
	return cachedAt(ctx, s, "", nil, func() (*seriesResult, error) { return s.computeSeries(ctx, req, periods, need) }, nil)
}

func (s *Store) computeSeries(ctx context.Context, req Request, periods []Range, need timelineNeeds) (*seriesResult, error) {
	points := seriesPoints(req.Range, periods) // the opening date, then every interval's end
	var (
		facts    *timelineFacts
		ex       *exclusions
		view     *syncView
		observed []observedDay
		activity UsageActivity
	)
	// A series that reads no customer's usage on its own reads the usage sales summed per currency
	// and day in scope, once the exclusions are known, instead of per customer.
	usage, totals := usageByCustomer, []tlUsage(nil)
	if !need.concentration {
		usage = usageScoped
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { facts, err = s.loadTimeline(gctx, req.Scope, points, usage); return })
	g.Go(func() (err error) { view, err = s.readSyncView(gctx, req.Scope); return })
	g.Go(func() (err error) {
		if ex, err = s.readExclusions(gctx, req.Scope); err != nil {
			return err
		}
		h, hctx := errgroup.WithContext(gctx)
		if need.observedSums {
			h.Go(func() (err error) {
				observed, err = s.readObservedDays(hctx, req.Scope, req.CustomerScope, ex, req.Range, true, nil)
				return
			})
		}
		h.Go(func() error {
			activity = s.usageActivity(hctx, req.Scope, req.CustomerScope, ex, req.Range.From.Start(), req.Range.To.End())
			return nil
		})
		if usage == usageScoped {
			h.Go(func() (err error) {
				totals, err = s.readTimelineUsageTotals(hctx, req.Scope, req.CustomerScope, ex, points[0].AddDays(-29).Start(),
					points[len(points)-1].End())
				return
			})
		}
		return h.Wait()
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	facts.usageTotals = totals
	sums := computeTimelineFor(need, facts, ex, req.CustomerScope, points, observed)
	if !need.observedSums {
		// Without their sums, the observed usage charges only give a block to a currency that has
		// none on some interval: read after the sweep, for those currencies only (usually none, so
		// ClickHouse reads only the currency column of a year of usage records).
		present, err := s.readObservedDays(ctx, req.Scope, req.CustomerScope, ex, req.Range, false, sums.everywhere())
		if err != nil {
			return nil, err
		}
		sums.addObserved(points, present, false)
	}
	blocks := sums.blocks()[1:]
	for i, p := range periods {
		complete := view.coverage(p, activity.Loaded).Transactions.Complete
		for cur, b := range blocks[i] {
			b.Usage.BilledUsage.Complete = complete
			blocks[i][cur] = b
		}
	}
	return &seriesResult{periods: periods, blocks: blocks, view: view, loaded: activity.Loaded}, nil
}

// pointSummary is interval i as the summary of its range answers it (without usage activity).
func (r *seriesResult) pointSummary(s *Store, req Request, i int, generatedAt time.Time) Summary {
	p := r.periods[i]
	preq := req
	preq.Range = p
	out := Summary{Envelope: s.envelope(preq, generatedAt, r.view, r.view.coverage(p, r.loaded)), ByCurrency: map[string]CurrencyBlock{},
		MetricBases: MetricBases{NetRevenueRetention: basisNRR, CustomerConcentration: basisTotalMRR}}
	for cur, b := range r.blocks[i] {
		if req.Currency == "" || req.Currency == cur {
			out.ByCurrency[cur] = b
		}
	}
	out.Currencies = sortedKeys(out.ByCurrency)
	out.MixedCurrencies = len(out.Currencies) > 1
	return out
}

// SeriesMetrics computes several metrics for every interval of the range in one sweep: per interval
// and metric, the body GET /api/v1/metrics/{metric} answers for the interval's range (MCP
// query_metrics).
func (s *Store) SeriesMetrics(ctx context.Context, names []string, interval string, req Request) ([][]MetricResponse, error) {
	for _, name := range names {
		if !slices.Contains(Metrics, name) {
			return nil, fmt.Errorf("%w: unknown metric %q (one of %v)", ErrNotFound, name, Metrics)
		}
	}
	generatedAt := s.now().UTC()
	r, err := s.seriesResult(ctx, req, interval)
	if err != nil {
		return nil, err
	}
	out := make([][]MetricResponse, len(r.periods))
	for i := range r.periods {
		sum := r.pointSummary(s, req, i, generatedAt)
		for _, name := range names {
			out[i] = append(out[i], focus(name, sum))
		}
	}
	return out, nil
}

// Series computes a metric at the end of every interval of the range (METRICS 3.13).
func (s *Store) Series(ctx context.Context, name, interval string, req Request) (SeriesResponse, error) {
	if !slices.Contains(Metrics, name) {
		return SeriesResponse{}, fmt.Errorf("%w: unknown metric %q (one of %v)", ErrNotFound, name, Metrics)
	}
	generatedAt := s.now().UTC()
	r, err := s.seriesResultFor(ctx, req, interval, needsOf(name))
	if err != nil {
		return SeriesResponse{}, err
	}
	out := SeriesResponse{Envelope: s.envelope(req, generatedAt, r.view, r.view.coverage(req.Range, r.loaded)), Metric: name, Interval: interval}
	currencies := map[string]bool{}
	for _, b := range r.blocks {
		for cur := range b {
			if req.Currency == "" || req.Currency == cur {
				currencies[cur] = true
			}
		}
	}
	out.Currencies = sortedKeys(currencies)
	out.MixedCurrencies = len(out.Currencies) > 1
	for i, p := range r.periods {
		sum := Summary{ByCurrency: map[string]CurrencyBlock{}}
		complete := r.view.coverage(p, r.loaded).Transactions.Complete
		for _, cur := range out.Currencies {
			b, ok := r.blocks[i][cur]
			if !ok { // a currency without a block at this point: zeros, ratios null
				b.Usage.BilledUsage.Complete = complete
			}
			sum.ByCurrency[cur] = b
		}
		f := focus(name, sum)
		out.MetricBasis = f.MetricBasis
		out.Points = append(out.Points, SeriesPoint{Date: p.To, PeriodFrom: p.From, ByCurrency: f.ByCurrency})
	}
	return out, nil
}

// readObservedDays reads the observed usage charges the scope admits per currency and day of the
// range, sorted by day: their sums (observedByDayHead), or without sums only which currencies other
// than except have one on which day (observedCurrenciesByDayHead).
func (s *Store) readObservedDays(ctx context.Context, sc Scope, cs CustomerScope, ex *exclusions, rng Range, sums bool,
	except []string) ([]observedDay, error) {
	q := new(stmt)
	switch {
	case sums:
		q.add(observedByDayHead)
	case len(except) > 0:
		q.add(observedCurrenciesByDayHead+observedOtherCurrencies, idSet(except))
	default:
		q.add(observedCurrenciesByDayHead)
	}
	q.add(observedByDayWhere, sc.WorkspaceID, sc.apps(), epochDay(rng.From.Start()), epochDay(rng.To.End()), sc.WorkspaceID, sc.apps())
	if !scopeFilterByID(q, cs, ex, sc) {
		return nil, nil
	}
	text, args := q.add(observedByDayTail).query()
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read observed usage charges: %w", err)
	}
	defer rows.Close()
	var out []observedDay
	for rows.Next() {
		var (
			o   observedDay
			day uint32
			n   uint64
		)
		if err := rows.Scan(&o.cur, &day, &o.gross, &n); err != nil {
			return nil, fmt.Errorf("read observed usage charges: %w", err)
		}
		o.day, o.count = int32(day), int64(n)
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b observedDay) int { return int(a.day) - int(b.day) })
	return out, rows.Err()
}
