package mcp

import (
	"context"
	"encoding/json"
	"time"
)

// Metrics are the names of GET /api/v1/metrics/{metric}.
var Metrics = []string{"mrr", "arr", "usage", "net-revenue-retention", "customer-concentration"}

// maxSeriesCalls bounds the REST calls of one query_metrics call (points × metrics): each is a full
// metric computation, and a model asking for a year of daily points should be steered to a coarser
// interval rather than make the workspace's queries wait.
const maxSeriesCalls = 120

// QueryMetricsArgs are query_metrics' arguments.
type QueryMetricsArgs struct {
	Metrics  []string `json:"metrics" jsonschema:"minItems=1,uniqueItems=true,enum=mrr,enum=arr,enum=usage,enum=net-revenue-retention,enum=customer-concentration" jsonschema_description:"One or more of: mrr (total, subscription and usage MRR), arr (MRR x 12), usage (usage MRR, billed usage and observed usage charges), net-revenue-retention, customer-concentration."`
	Interval string   `json:"interval,omitempty" jsonschema:"enum=none,enum=day,enum=week,enum=month" jsonschema_description:"none (default): one point for the whole range. day, week (ISO weeks, Monday to Sunday) or month (calendar months): one point per period, the first and last clipped to the range; each point is the metric computed for that period alone, with point-in-time figures on its last date."`
	ReportingArgs
}

// QueryMetricsResult is query_metrics' output.
type QueryMetricsResult struct {
	// Range is the whole range, as the REST API resolved it (its defaults applied).
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
	Results map[string]json.RawMessage `json:"results"`
}

const queryMetricsDescription = "One or more metrics over a date range, optionally as a series of daily, weekly or monthly points. " +
	"Output: {range, interval, metrics, points: [{range: {from, to}, results: {<metric>: <body of GET /api/v1/metrics/<metric> for that range>}}]}. " +
	"Each result holds the metric per currency in `byCurrency`, plus `coverage` and `staleDataWarning` for that period. " +
	"Point-in-time figures (MRR, ARR, concentration) are as of each point's last date; usage sums cover the point's dates; " +
	"net revenue retention compares each point's opening with its close. A series makes one computation per point and metric, " +
	"at most 120 per call (e.g. 90 daily points of one metric, or 12 monthly points of all five); beyond that, ask for a coarser " +
	"interval, fewer metrics or a shorter range. Every computation spends the key's reporting budget (an answer computed before, for unchanged data, " +
	"costs far less); beyond the budget the call fails with the seconds to wait. For a plain workspace overview, get_summary is cheaper." + moneyNote

func (t *tools) queryMetrics() toolDef {
	return newTool(t, "query_metrics", "Metrics and time series", queryMetricsDescription, nil, t.runQueryMetrics)
}

func (t *tools) runQueryMetrics(ctx context.Context, a QueryMetricsArgs) (json.RawMessage, error) {
	// The schema has checked the metric names (one or more, known, each once).
	if a.Interval == "" {
		a.Interval = intervalNone
	}
	rng := period{From: a.From, To: a.To}
	periods := []period{rng}
	if a.Interval != intervalNone {
		var err error
		if rng, periods, err = t.series(ctx, a); err != nil {
			return nil, err
		}
	}
	var calls []restCall
	for _, p := range periods {
		for _, m := range a.Metrics {
			q := a.values()
			set(q, "from", p.From)
			set(q, "to", p.To)
			calls = append(calls, restCall{path: "/api/v1/metrics/" + m, q: q})
		}
	}
	bodies, err := t.rest.getAll(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := QueryMetricsResult{Range: rng, Interval: a.Interval, Metrics: a.Metrics}
	for i, p := range periods {
		pt := MetricPoint{Range: p, Results: make(map[string]json.RawMessage, len(a.Metrics))}
		for j, m := range a.Metrics {
			pt.Results[m] = bodies[i*len(a.Metrics)+j]
		}
		out.Points = append(out.Points, pt)
	}
	if a.Interval == intervalNone {
		// The REST API resolved the range's defaults; report the range it used.
		if out.Range, err = rangeOf(bodies[0]); err != nil {
			return nil, err
		}
		out.Points[0].Range = out.Range
	}
	return marshal(out)
}

// series resolves the whole range and cuts it into periods.
func (t *tools) series(ctx context.Context, a QueryMetricsArgs) (period, []period, error) {
	rng := period{From: a.From, To: a.To}
	if rng.From == "" || rng.To == "" {
		// The REST API owns the default range: ask it, with the first metric over the whole range.
		body, err := t.rest.get(ctx, "/api/v1/metrics/"+a.Metrics[0], a.values())
		if err != nil {
			return rng, nil, err
		}
		if rng, err = rangeOf(body); err != nil {
			return rng, nil, err
		}
	}
	from, errFrom := time.Parse(time.DateOnly, rng.From)
	to, errTo := time.Parse(time.DateOnly, rng.To)
	switch {
	case errFrom != nil:
		return rng, nil, invalidArgs("from must be a date YYYY-MM-DD")
	case errTo != nil:
		return rng, nil, invalidArgs("to must be a date YYYY-MM-DD")
	case from.After(to):
		return rng, nil, invalidArgs("from must not be after to")
	}
	if n := countPeriods(from, to, a.Interval); n*len(a.Metrics) > maxSeriesCalls {
		return rng, nil, invalidArgs("a %s series from %s to %s has %d points; with %d metrics that is %d computations, more than %d: "+
			"use a coarser interval, fewer metrics or a shorter range", a.Interval, rng.From, rng.To, n, len(a.Metrics), n*len(a.Metrics), maxSeriesCalls)
	}
	return rng, splitPeriods(from, to, a.Interval), nil
}

// rangeOf reads the resolved range of a REST reporting body.
func rangeOf(body json.RawMessage) (period, error) {
	var b struct {
		Range period `json:"range"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return period{}, err
	}
	return b.Range, nil
}
