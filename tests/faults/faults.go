package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"
)

// fault is one thing that goes wrong, brought back at once (components) or after a hold (services).
type fault struct {
	Name   string
	Target string // ingest, process, query, upload (components); kafka, clickhouse, redis (services)
	Term   bool   // SIGTERM and the component's drain, rather than kill -9
}

func (f fault) service() bool {
	return f.Target == "kafka" || f.Target == "clickhouse" || f.Target == "redis"
}

// allFaults run one at a time in this order: each component killed and stopped, then each service
// killed (the broker last: it takes longest to come back).
var allFaults = []fault{
	{"ingest kill -9", "ingest", false}, {"ingest SIGTERM", "ingest", true},
	{"process kill -9", "process", false}, {"process SIGTERM", "process", true},
	{"query kill -9", "query", false}, {"query SIGTERM", "query", true},
	{"upload kill -9", "upload", false}, {"upload SIGTERM", "upload", true},
	{"Redis kill -9", "redis", false}, {"ClickHouse kill -9", "clickhouse", false}, {"Kafka kill -9", "kafka", false},
}

// faultResult is what one fault did.
type faultResult struct {
	fault
	Start time.Time // injected
	// Down is injection until the target was brought back and answered (a component's /readyz,
	// a service's own probe in deploy/local/stack).
	Down time.Duration
	// Recover is injection until the edge acknowledged again after the return and the first event
	// acknowledged after the return, with every event acknowledged from 5 s before the fault until
	// then, had arrived in every landing table (and, for the query component, until the reporting
	// API answered).
	Recover time.Duration
	// EdgeGap is the longest time within the phase without any 2xx from the edge.
	EdgeGap                                         time.Duration
	NotReady                                        map[string]time.Duration // /readyz not 200 between injection and recovery
	Requests, OK, Unavailable, Transport, OverBound int
	MaxLatency                                      time.Duration
	Err                                             error
}

// recoveryWindow: events acknowledged this long before a fault must have landed too for it to
// count as recovered (they may have been in flight when it struck).
const recoveryWindow = 5 * time.Second

type runner struct {
	opts     options
	stack    stackCtl
	stackLog *os.File
	comps    map[string]*component
	led      *ledger
	ready    *readinessPoll
	queryKey string
	deadline time.Time // the suite's own time budget
}

// runFaults runs every selected fault in turn under the running load.
func (r *runner) runFaults(ctx context.Context, faults []fault) []faultResult {
	var out []faultResult
	for _, f := range faults {
		res := faultResult{fault: f}
		if time.Until(r.deadline) < r.opts.settle+r.opts.recoverCap {
			res.Err = errors.New("not run: the suite's time budget ran out")
			out = append(out, res)
			continue
		}
		progress("fault: %s", f.Name)
		r.led.setPhase(f.Name)
		phaseStart := time.Now()
		sleep(ctx, r.opts.settle)
		res.Start = time.Now()
		back, faultErr, err := r.inject(ctx, f)
		if err != nil {
			res.Err = errors.Join(faultErr, err)
			out = append(out, r.stats(res, phaseStart, time.Now()))
			continue
		}
		res.Down = back.Sub(res.Start)
		rec, err := r.awaitRecovery(ctx, f, res.Start, back)
		end := rec
		if err != nil {
			end = time.Now()
		} else {
			res.Recover = rec.Sub(res.Start)
		}
		res.Err = errors.Join(faultErr, err)
		res.NotReady = r.ready.notReady(res.Start, end)
		out = append(out, r.stats(res, phaseStart, end))
		progress("  down %s, recovered after %s %v", round(res.Down), round(res.Recover), errOrEmpty(res.Err))
	}
	return out
}

// inject breaks the target and brings it back, returning when it answered again. faultErr is
// how the fault itself went wrong without stopping the run (a component that did not stop within
// 30 s of SIGTERM was killed); err means the target could not be brought back.
func (r *runner) inject(ctx context.Context, f fault) (back time.Time, faultErr, err error) {
	if f.service() {
		if err := r.stack.kill(f.Target); err != nil {
			return time.Time{}, nil, err
		}
		sleep(ctx, r.opts.hold)
		if err := r.stack.up(ctx, r.stackLog); err != nil {
			return time.Time{}, nil, err
		}
		return time.Now(), nil, nil
	}
	c := r.comps[f.Target]
	if f.Term {
		faultErr = c.term(30 * time.Second)
	} else if err := c.kill(); err != nil {
		return time.Time{}, nil, err
	}
	if err := c.start(); err != nil {
		return time.Time{}, faultErr, err
	}
	if err := c.ready(ctx, 90*time.Second); err != nil {
		return time.Time{}, faultErr, err
	}
	return time.Now(), faultErr, nil
}

// awaitRecovery waits until the pipeline is whole again (see faultResult.Recover) or the cap.
func (r *runner) awaitRecovery(ctx context.Context, f fault, start, back time.Time) (time.Time, error) {
	deadline := start.Add(r.opts.recoverCap)
	var probeOK time.Time
	for {
		now := time.Now()
		if f.Target == "query" && probeOK.IsZero() && r.queryAnswers(ctx) {
			probeOK = time.Now()
		}
		edge := r.led.firstAckAfter(back)
		// The first event acknowledged after the return: once it and everything acknowledged
		// before it (from just before the fault) have landed, landing has caught up.
		first := r.led.firstAckedAfter(back)
		if !edge.IsZero() && !first.IsZero() && (f.Target != "query" || !probeOK.IsZero()) {
			last, _, missing := r.led.lastLanding(start.Add(-recoveryWindow), first)
			if missing == 0 {
				return later(later(edge, last), probeOK), nil
			}
		}
		if now.After(deadline) {
			_, acked, missing := r.led.lastLanding(start.Add(-recoveryWindow), later(back, now))
			return time.Time{}, fmt.Errorf("not recovered within %s: %d of %d events acknowledged around the fault have not landed; edge acknowledged again: %v",
				r.opts.recoverCap, missing, acked, !edge.IsZero())
		}
		sleep(ctx, 250*time.Millisecond)
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
	}
}

// queryAnswers is one read through the reporting API of the query component.
func (r *runner) queryAnswers(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.comps["query"].baseURL()+"/api/v1/tracking/events?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+r.queryKey)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stats fills in the phase's request figures.
func (r *runner) stats(res faultResult, from, to time.Time) faultResult {
	var oks []time.Time
	for _, q := range r.led.requestsIn(res.Name) {
		if q.Abandoned {
			continue
		}
		res.Requests++
		switch {
		case q.Status/100 == 2:
			res.OK++
			oks = append(oks, q.Start.Add(q.Duration))
		case q.Status == 0:
			res.Transport++
		case q.Status >= 500:
			res.Unavailable++
		}
		res.MaxLatency = max(res.MaxLatency, q.Duration)
		if q.Duration > r.opts.bound {
			res.OverBound++
		}
	}
	slices.SortFunc(oks, func(a, b time.Time) int { return a.Compare(b) })
	prev := from
	for _, t := range append(oks, to) {
		if t.After(to) {
			t = to
		}
		res.EdgeGap = max(res.EdgeGap, t.Sub(prev))
		prev = later(prev, t)
	}
	return res
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}
