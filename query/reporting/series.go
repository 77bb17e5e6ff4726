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

// MaxSeriesPoints bounds a series (METRICS 3.13): a year of daily points.
const MaxSeriesPoints = 366

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

// seriesMetrics are the metrics a series answers: the point-in-time ones. Billed and observed
// usage are sums over a range, which the summary answers for any range.
var seriesMetrics = []string{MetricMRR, MetricARR, MetricNetRevenueRetention, MetricCustomerConcentration}

// Series computes a metric at the end of every interval of the range in one sweep of the timeline
// engine (timeline.go), never one summary per point.
func (s *Store) Series(ctx context.Context, name, interval string, req Request) (SeriesResponse, error) {
	if !slices.Contains(Metrics, name) {
		return SeriesResponse{}, fmt.Errorf("%w: unknown metric %q (one of %v)", ErrNotFound, name, Metrics)
	}
	if !slices.Contains(seriesMetrics, name) {
		return SeriesResponse{}, fmt.Errorf("%w: interval does not apply to the %s metric (billed and observed usage are sums over the range): "+
			"ask for each range, or for mrr", ErrInvalid, name)
	}
	periods, err := Periods(req.Range, interval)
	if err != nil {
		return SeriesResponse{}, err
	}
	generatedAt := s.now().UTC()
	points := seriesPoints(req.Range, periods) // the opening date, then every interval's end
	var (
		facts *timelineFacts
		ex    *exclusions
		view  *syncView
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { facts, err = s.loadTimeline(gctx, req.Scope, points); return })
	g.Go(func() (err error) { ex, err = s.readExclusions(gctx, req.Scope); return })
	g.Go(func() (err error) { view, err = s.readSyncView(gctx, req.Scope); return })
	if err := g.Wait(); err != nil {
		return SeriesResponse{}, err
	}
	blocks := computeTimeline(facts, ex, req.CustomerScope, points).blocks()
	out := SeriesResponse{Envelope: s.envelope(req, generatedAt, view, view.coverage(req.Range, false)), Metric: name, Interval: interval}
	// Usage activity is not read: no series shows it (coverage.usageActivity.loaded is false).
	currencies := map[string]bool{}
	for _, b := range blocks[1:] {
		for cur := range b {
			if req.Currency == "" || req.Currency == cur {
				currencies[cur] = true
			}
		}
	}
	out.Currencies = sortedKeys(currencies)
	out.MixedCurrencies = len(out.Currencies) > 1
	for i, p := range periods {
		sum := Summary{ByCurrency: map[string]CurrencyBlock{}}
		for _, cur := range out.Currencies {
			sum.ByCurrency[cur] = blocks[i+1][cur] // a currency without a block at this point: zeros, ratios null
		}
		f := focus(name, sum)
		out.MetricBasis = f.MetricBasis
		out.Points = append(out.Points, SeriesPoint{Date: p.To, PeriodFrom: p.From, ByCurrency: f.ByCurrency})
	}
	return out, nil
}
