package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/controlplane"
)

// throughputResult is one throughput pass: n server events produced at once to the server-events
// topic, timed from the first produce until every row of the pass reached its final state
// (validated for a Validation only mapping, accepted for a live one).
type throughputResult struct {
	Live     bool
	Interval time.Duration
	Events   int
	Final    string
	Seeded   time.Duration
	// Since the first produce: all produced, all jobs produced by the matcher, all rows filed in
	// the queue, all rows in the final state (0 when not reached).
	Produced, Matched, Filed, Done time.Duration
	Took                           time.Duration // until Done, or until the pass gave up
	FiledN, DoneN                  uint64
	Requests, RequestEvents        int           // what the fake received during the pass
	ReqMean                        time.Duration // the uploader's mean events:ingest request time
	Outcomes                       map[string]float64
	MaxParts                       uint64 // most active parts of upload_queue seen during the pass
	MatchWaited                    float64
	CPU                            benchkit.CPUUse
}

// RowsPerSec is the pass's rate: events in their final state per second from the first produce.
func (r throughputResult) RowsPerSec() float64 {
	if r.Done <= 0 {
		return 0
	}
	return float64(r.Events) / r.Done.Seconds()
}

func (r throughputResult) name() string {
	if r.Live {
		return fmt.Sprintf("live, dispatch every %s", r.Interval)
	}
	return fmt.Sprintf("Validation only, dispatch every %s", r.Interval)
}

func (r throughputResult) problems() []string {
	var out []string
	if r.DoneN < uint64(r.Events) {
		out = append(out, fmt.Sprintf("upload throughput (%s): %d of %d rows %s (%d filed) after %s",
			r.name(), r.DoneN, r.Events, r.Final, r.FiledN, r.Took.Round(time.Millisecond)))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Outcomes)) {
		if k != statusValidated && k != statusAccepted && r.Outcomes[k] > 0 {
			out = append(out, fmt.Sprintf("upload throughput (%s): %.0f events:ingest requests ended %s", r.name(), r.Outcomes[k], k))
		}
	}
	return out
}

// throughputPass seeds the pass's clicks, starts an uploader at the interval, primes the path, then
// produces n server events of m's milestone and polls the queue every 200 ms until every row is in
// m's final state.
func (e *uploadEnv) throughputPass(ctx context.Context, tag string, interval time.Duration, u uploadOptions,
	m controlplane.AdMapping, n int) (throughputResult, error) {
	r := throughputResult{Live: !m.ValidationOnly, Interval: interval, Events: n, Final: statusValidated}
	if r.Live {
		r.Final = statusAccepted
	}
	var err error
	if r.Seeded, err = e.seedClicks(ctx, tag, n); err != nil {
		return r, err
	}
	if err := e.startUploader(interval, u); err != nil {
		return r, err
	}
	if err := e.prime(ctx, tag+"w", u.poll, interval); err != nil {
		return r, err
	}
	reg := e.up.reg
	outcomes0 := counterBy(reg, "revtrack_upload_ingest_requests_total", "outcome")
	jobs0 := counterSum(e.procReg, "revtrack_upload_match_jobs_total")
	waits0 := counterSum(e.procReg, "revtrack_upload_match_late_click_waits_total")
	reqSum0, reqCount0 := histogramTotals(reg, "revtrack_upload_ingest_request_seconds")

	before := benchkit.SampleCPU(e.stackDir)
	start := time.Now()
	if err := e.produceServerEvents(ctx, tag, n, m.Milestone); err != nil {
		return r, fmt.Errorf("produce server events: %w", err)
	}
	r.Produced = time.Since(start)
	timeout := 2*time.Minute + time.Duration(n)*10*time.Millisecond
	for {
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return r, err
		}
		jobs := counterSum(e.procReg, "revtrack_upload_match_jobs_total") - jobs0
		filed, done, err := e.rowCounts(ctx, m.MappingID, tag, r.Final)
		if err != nil {
			return r, err
		}
		parts, err := e.activeParts(ctx)
		if err != nil {
			return r, err
		}
		r.MaxParts = max(r.MaxParts, parts)
		at := time.Since(start)
		r.FiledN, r.DoneN, r.Took = filed, done, at
		if r.Matched == 0 && jobs >= float64(n) {
			r.Matched = at
		}
		if r.Filed == 0 && filed >= uint64(n) {
			r.Filed = at
		}
		if done >= uint64(n) {
			r.Done = at
			break
		}
		if at > timeout {
			break
		}
	}
	r.CPU = benchkit.CPUBetween(before, benchkit.SampleCPU(e.stackDir), 0)
	r.MatchWaited = counterSum(e.procReg, "revtrack_upload_match_late_click_waits_total") - waits0
	r.Outcomes = counterBy(reg, "revtrack_upload_ingest_requests_total", "outcome")
	for k, v := range outcomes0 {
		r.Outcomes[k] -= v
	}
	reqSum, reqCount := histogramTotals(reg, "revtrack_upload_ingest_request_seconds")
	r.ReqMean = meanBetween(reqSum0, reqCount0, reqSum, reqCount)
	if r.Requests, r.RequestEvents, err = e.ingestCount(start); err != nil {
		return r, err
	}
	return r, e.stopUploader()
}
