package mcp

import (
	"context"
	"time"

	"github.com/revtrack/revtrack/query/reporting"
)

// Metrics are the names of GET /api/v1/metrics/{metric}.
var Metrics = []string{"mrr", "arr", "usage", "net-revenue-retention", "customer-concentration"}

// QueryMetricsArgs are query_metrics' arguments.
type QueryMetricsArgs struct {
	Metrics  []string `json:"metrics" jsonschema:"minItems=1,uniqueItems=true,enum=mrr,enum=arr,enum=usage,enum=net-revenue-retention,enum=customer-concentration" jsonschema_description:"One or more of: mrr (total, subscription and usage MRR), arr (MRR x 12), usage (usage MRR, billed usage and observed usage charges), net-revenue-retention, customer-concentration."`
	Interval string   `json:"interval,omitempty" jsonschema:"enum=none,enum=day,enum=week,enum=month" jsonschema_description:"none (default): one point for the whole range. day, week (ISO weeks, Monday to Sunday) or month (calendar months): one point per period, the first and last clipped to the range; each point is the metric computed for that period alone, with point-in-time figures on its last date."`
	ReportingArgs
}

// QueryMetricsResult is query_metrics' output.
type QueryMetricsResult struct {
	// Range is the whole range, as the REST API resolves it (its defaults applied).
	Range    period   `json:"range"`
	Interval string   `json:"interval"`
	Metrics  []string `json:"metrics"`
	// Points are in date order; one point when Interval is none.
	Points []MetricPoint `json:"points"`
}

// MetricPoint is every requested metric for one period.
type MetricPoint struct {
	Range period `json:"range"`
	// Results maps each metric to the body of GET /api/v1/metrics/{metric} for the point's range.
	Results map[string]reporting.MetricResponse `json:"results"`
}

const queryMetricsDescription = "One or more metrics over a date range, optionally as a series of daily, weekly or monthly points. " +
	"Output: {range, interval, metrics, points: [{range: {from, to}, results: {<metric>: <body of GET /api/v1/metrics/<metric> for that range>}}]}. " +
	"Each result holds the metric per currency in `byCurrency`, plus `coverage` and `staleDataWarning` for that period. " +
	"Point-in-time figures (MRR, ARR, concentration) are as of each point's last date; usage sums cover the point's dates; " +
	"net revenue retention compares each point's opening with its close. A series is one computation, whatever its metrics, " +
	"at most 367 points per call (the daily points of the longest range); beyond that, ask for a coarser interval or a shorter range. Every computation spends the key's reporting budget (an answer computed before, for unchanged data, " +
	"costs far less); beyond the budget the call fails with the seconds to wait. For a plain workspace overview, get_summary is cheaper." + moneyNote

func (t *tools) queryMetrics() toolDef {
	return newTool(t, "query_metrics", "Metrics and time series", queryMetricsDescription, nil, t.runQueryMetrics)
}

func (t *tools) runQueryMetrics(ctx context.Context, a QueryMetricsArgs) (QueryMetricsResult, error) {
	// The schema has checked the metric names (one or more, known, each once).
	if a.Interval == "" {
		a.Interval = intervalNone
	}
	rng := period{From: a.From, To: a.To}
	var req reporting.Request
	if a.Interval == intervalNone || rng.From == "" || rng.To == "" {
		// The REST parser owns the default range: the whole range, as GET /api/v1/metrics reads it.
		var err error
		if req, err = t.svc.reportingRequest(ctx, a.values()); err != nil {
			return QueryMetricsResult{}, err
		}
		rng = period{From: req.Range.From.String(), To: req.Range.To.String()}
	}
	out := QueryMetricsResult{Range: rng, Interval: a.Interval, Metrics: a.Metrics}
	n := len(a.Metrics)
	if a.Interval == intervalNone {
		results, err := readAll(ctx, n, func(ctx context.Context, i int) (reporting.MetricResponse, error) {
			return t.svc.metric(ctx, a.Metrics[i], req)
		})
		if err != nil {
			return QueryMetricsResult{}, err
		}
		pt := MetricPoint{Range: rng, Results: make(map[string]reporting.MetricResponse, n)}
		for j, m := range a.Metrics {
			pt.Results[m] = results[j]
		}
		out.Points = append(out.Points, pt)
		return out, nil
	}
	periods, err := series(rng, a)
	if err != nil {
		return QueryMetricsResult{}, err
	}
	// One computation of the whole series (docs/METRICS.md 3.13): each point is what GET
	// /api/v1/metrics/{metric}?from=…&to=… answers for the point's range. The range may be longer
	// than one REST range (a two-year monthly series): the REST parser checks the other parameters
	// and the last period's dates, the whole range is then set.
	q := a.values()
	set(q, "from", periods[len(periods)-1].From)
	set(q, "to", rng.To)
	if req, err = t.svc.reportingRequest(ctx, q); err != nil {
		return QueryMetricsResult{}, err
	}
	from, _ := reporting.ParseDate(rng.From)
	req.Range.From = from
	results, err := t.svc.seriesMetrics(ctx, a.Metrics, a.Interval, req)
	if err != nil {
		return QueryMetricsResult{}, err
	}
	for i, p := range periods {
		pt := MetricPoint{Range: p, Results: make(map[string]reporting.MetricResponse, n)}
		for j, m := range a.Metrics {
			pt.Results[m] = results[i][j]
		}
		out.Points = append(out.Points, pt)
	}
	return out, nil
}

// series cuts the whole range into the periods of the interval, refusing a series of more points
// than a REST series may have. The whole range need not fit in one REST range (a two-year monthly
// series is 24 points).
func series(rng period, a QueryMetricsArgs) ([]period, error) {
	from, errFrom := time.Parse(time.DateOnly, rng.From)
	to, errTo := time.Parse(time.DateOnly, rng.To)
	switch {
	case errFrom != nil:
		return nil, invalidArgs("from must be a date YYYY-MM-DD")
	case errTo != nil:
		return nil, invalidArgs("to must be a date YYYY-MM-DD")
	case from.After(to):
		return nil, invalidArgs("from must not be after to")
	}
	if n := countPeriods(from, to, a.Interval); n > reporting.MaxSeriesPoints {
		return nil, invalidArgs("a %s series from %s to %s has %d points, more than %d: use a coarser interval or a shorter range",
			a.Interval, rng.From, rng.To, n, reporting.MaxSeriesPoints)
	}
	return splitPeriods(from, to, a.Interval), nil
}
