package main

import "time"

// The revenue-over-time rows of issue 14 (docs/METRICS.md 3.13, 3.14 and 10): a 365-day daily MRR
// series, 12 months of MRR movements and attribution by campaign. Each is timed computed (with
// `Cache-Control: no-cache`: what the first request after new data costs, never a kept response) and
// judged as a ratio to the computed summary measured in the same rounds, so that a busy machine
// moves both sides alike (docs/BENCHMARKS.md).
const (
	seriesComputed      = "metric mrr, 365 days daily" + computedSuffix
	movementsComputed   = "MRR movements, 12 months monthly" + computedSuffix
	attributionComputed = "attribution by campaign" + computedSuffix
	// The goals: series and movements p50 ≤ 2× the computed summary p50, attribution ≤ 1×.
	seriesMaxRatio      = 2
	movementsMaxRatio   = 2
	attributionMaxRatio = 1
)

// revenueRanges are the ranges of the revenue rows, from the last whole day of the data set (YYYY-MM-DD):
// the series ends there and covers 365 dates; the movements cover the 12 whole calendar months
// before that day's month.
func revenueRanges(lastDay string) (seriesFrom, movementsFrom, movementsTo string) {
	to, err := time.Parse(time.DateOnly, lastDay)
	if err != nil {
		return "", "", ""
	}
	month := time.Date(to.Year(), to.Month(), 1, 0, 0, 0, 0, time.UTC)
	return to.AddDate(0, 0, -364).Format(time.DateOnly), month.AddDate(0, -12, 0).Format(time.DateOnly),
		month.AddDate(0, 0, -1).Format(time.DateOnly)
}

// revenueTargets are the three rows; attribution takes the summary's range (rng: "" or
// "from=…&to=…"), as the summary it is compared with.
func (a *api) revenueTargets(p queryPlan, rng string) []target {
	var ts []target
	if sf, mf, mt := revenueRanges(p.lastDay); sf != "" {
		ts = append(ts,
			target{name: seriesComputed, computed: true, goal: goal{relTo: summaryComputed, maxRatio: seriesMaxRatio},
				probe: a.pathComputed(fixed("/api/v1/metrics/mrr?interval=day&from=" + sf + "&to=" + p.lastDay))},
			target{name: movementsComputed, computed: true, goal: goal{relTo: summaryComputed, maxRatio: movementsMaxRatio},
				probe: a.pathComputed(fixed("/api/v1/mrr-movements?interval=month&from=" + mf + "&to=" + mt))})
	}
	path := "/api/v1/attribution?groupBy=utm_campaign"
	if rng != "" {
		path += "&" + rng
	}
	return append(ts, target{name: attributionComputed, computed: true, goal: goal{relTo: summaryComputed, maxRatio: attributionMaxRatio},
		probe: a.pathComputed(fixed(path))})
}

// baselinePath is the baseline's request: the tracking events of the data set's end date, after its
// last whole day, where the tracking part (tracking.go) has none, so that the baseline stays
// authentication, the workspace lookup and one trivial ClickHouse query that finds nothing, as it
// was before the bench data set had tracking data.
func baselinePath(lastDay string) string {
	to, err := time.Parse(time.DateOnly, lastDay)
	if err != nil {
		return "/api/v1/tracking/events?limit=1"
	}
	end := to.AddDate(0, 0, 1).Format(time.DateOnly)
	return "/api/v1/tracking/events?limit=1&from=" + end + "&to=" + end
}
