package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

// latencyResult is one latency pass: server events sent one per request through the edge at a
// steady rate, each timed from its 2xx at the client to the first ClickHouse poll that showed its
// queue row filed, and validated; and to the moment the fake Google received the request that
// carried it.
type latencyResult struct {
	Interval    time.Duration
	Events      int
	Seeded      time.Duration
	Acked       int
	Validated   int
	Failed      map[string]int // non-2xx answers and transport errors, by kind
	NotDone     map[string]int // rows that did not reach validated, by their last state ("" = not filed)
	Post        []time.Duration
	Filed       []time.Duration
	AtFake      []time.Duration
	Done        []time.Duration
	Requests    int // events:ingest requests that carried the pass's events
	MaxPerReq   int
	CPU         benchkit.CPUUse
	MatchWaited float64 // late-click waits of the matcher during the pass (0 when every click had landed)
}

func (r latencyResult) problems() []string {
	var out []string
	if len(r.Failed) > 0 {
		out = append(out, fmt.Sprintf("upload latency at %s: edge answers other than 2xx: %v", r.Interval, r.Failed))
	}
	if r.Validated != r.Acked {
		out = append(out, fmt.Sprintf("upload latency at %s: %d of %d acknowledged events reached validated; the others: %v",
			r.Interval, r.Validated, r.Acked, r.NotDone))
	}
	return out
}

// tracked is one server event followed from the edge to its queue row.
type tracked struct {
	row, tx     string
	sent, acked time.Time
	fail, state string
	filed, done time.Time
	req         *fakeRequest // the events:ingest request that carried it, nil if none did
}

// latencyPass seeds the pass's clicks, starts an uploader at the interval, primes the path, then
// measures. The uploader is stopped at the end.
func (e *uploadEnv) latencyPass(ctx context.Context, tag string, interval time.Duration, u uploadOptions) (latencyResult, error) {
	r := latencyResult{Interval: interval, Events: u.latencyEvents, Failed: map[string]int{}, NotDone: map[string]int{}}
	var err error
	if r.Seeded, err = e.seedClicks(ctx, tag, u.latencyEvents); err != nil {
		return r, err
	}
	if err := e.startUploader(interval, u); err != nil {
		return r, err
	}
	if err := e.prime(ctx, tag+"w", u.poll, interval); err != nil {
		return r, err
	}
	waits0 := counterSum(e.procReg, "revtrack_upload_match_late_click_waits_total")
	before := benchkit.SampleCPU(e.stackDir)
	evs, err := e.sendAndTrack(ctx, tag, u.latencyEvents, u.latencyRate, "paid", e.validation, statusValidated, u.poll, interval+30*time.Second)
	r.CPU = benchkit.CPUBetween(before, benchkit.SampleCPU(e.stackDir), 0)
	r.MatchWaited = counterSum(e.procReg, "revtrack_upload_match_late_click_waits_total") - waits0
	if stopErr := e.stopUploader(); err == nil {
		err = stopErr
	}
	if err != nil {
		return r, err
	}
	perReq := map[int]bool{}
	for _, ev := range evs {
		switch {
		case ev.fail != "":
			r.Failed[ev.fail]++
			continue
		case ev.done.IsZero():
			r.NotDone[ev.state]++
		default:
			r.Validated++
			r.Done = append(r.Done, ev.done.Sub(ev.acked))
		}
		r.Acked++
		r.Post = append(r.Post, ev.acked.Sub(ev.sent))
		if !ev.filed.IsZero() {
			r.Filed = append(r.Filed, ev.filed.Sub(ev.acked))
		}
		if ev.req != nil {
			r.AtFake = append(r.AtFake, ev.req.At.Sub(ev.acked))
			perReq[ev.req.Index] = true
			r.MaxPerReq = max(r.MaxPerReq, ev.req.Events)
		}
	}
	r.Requests = len(perReq)
	for _, d := range [][]time.Duration{r.Post, r.Filed, r.AtFake, r.Done} {
		slices.Sort(d)
	}
	return r, nil
}

// prime sends a few events through the whole path and waits until they are validated, so that a
// measurement never includes a consumer group's join (the processors' or a new uploader's).
func (e *uploadEnv) prime(ctx context.Context, tag string, poll, interval time.Duration) error {
	const n = 3
	if _, err := e.seedClicks(ctx, tag, n); err != nil {
		return err
	}
	evs, err := e.sendAndTrack(ctx, tag, n, 10, "paid", e.validation, statusValidated, poll, interval+90*time.Second)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if ev.fail != "" || ev.done.IsZero() {
			return fmt.Errorf("priming: event %s did not reach validated (edge: %q, last state %q)", ev.row, ev.fail, ev.state)
		}
	}
	return nil
}

// statusValidated and statusAccepted are the queue states the passes wait for (uploader.Status
// values, as upload_queue stores them).
const (
	statusValidated = "validated"
	statusAccepted  = "accepted"
)

// sendAndTrack sends n server events of the pass through the edge at rate per second, each on its
// own goroutine so that a slow answer does not delay the schedule, and polls the queue every poll
// interval for the acknowledged rows not yet in state want. It stops when every acknowledged row is
// in that state, or wait after the last answer. Then it matches each row's transaction ID with the
// fake's recorded requests.
func (e *uploadEnv) sendAndTrack(ctx context.Context, tag string, n, rate int, milestone string, m controlplane.AdMapping,
	want string, poll, wait time.Duration) ([]*tracked, error) {
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	start := time.Now()
	evs := make([]*tracked, n)
	for i := range n {
		hash := schemas.EventIDHash(e.st.Source.ID, passEvent(tag, i))
		evs[i] = &tracked{row: schemas.UploadRowID(m.MappingID, hash), tx: schemas.UploadTransactionID(m.MappingID, hash)}
	}
	send := func(i int) bool {
		sent := time.Now()
		at, fail := e.postServerEvent(ctx, client, tag, i, milestone)
		evs[i].sent, evs[i].acked, evs[i].fail = sent, at, fail
		return fail == ""
	}
	seen := func(ctx context.Context, pending []int) ([]int, error) {
		ids := make([]string, len(pending))
		for k, i := range pending {
			ids[k] = evs[i].row
		}
		states, err := e.rowStates(ctx, ids)
		if err != nil {
			return nil, err
		}
		at := time.Now()
		var done []int
		for _, i := range pending {
			ev := evs[i]
			st, ok := states[ev.row]
			if !ok {
				continue
			}
			if ev.filed.IsZero() {
				ev.filed = at
			}
			ev.state = st
			if st == want {
				ev.done = at
				done = append(done, i)
			}
		}
		return done, nil
	}
	if err := (benchkit.Paced{N: n, Rate: rate, Poll: poll, Wait: wait}).Run(ctx, send, seen); err != nil {
		return nil, err
	}

	sentAt, err := e.fakeIngests(start)
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		ev.req = sentAt[ev.tx]
	}
	return evs, nil
}
