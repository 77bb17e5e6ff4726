package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// sent is one event of the steady load: what was sent, whether the edge acknowledged it.
type sent struct {
	id      string
	browser bool
	acked   time.Time // zero: never acknowledged
	phase   string    // the phase it was first sent in
}

// attempt is one request of the load, as the edge answered it (0: a transport error).
type attempt struct {
	at       time.Time
	took     time.Duration
	status   int
	phase    string
	browser  bool
	errorKey string // the JSON error of a refusal
}

// ledger keeps every event and request of the load.
type ledger struct {
	mu       sync.Mutex
	events   map[string]*sent
	attempts []attempt
	phase    string
}

func newLedger() *ledger { return &ledger{events: map[string]*sent{}, phase: "warmup"} }

func (l *ledger) setPhase(p string) { l.mu.Lock(); l.phase = p; l.mu.Unlock() }

func (l *ledger) add(e *sent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.phase = l.phase
	l.events[e.id] = e
}

func (l *ledger) ack(id string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.events[id]; e != nil && e.acked.IsZero() {
		e.acked = at
	}
}

func (l *ledger) record(a attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a.phase = l.phase
	l.attempts = append(l.attempts, a)
}

// ackedIDs are the events (of one kind) acknowledged within [from, to].
func (l *ledger) ackedIDs(browser bool, from, to time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, e := range l.events {
		if e.browser == browser && !e.acked.IsZero() && !e.acked.Before(from) && !e.acked.After(to) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// okBetween counts the 2xx answers to requests made and answered wholly within [from, to].
func (l *ledger) okBetween(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.attempts {
		if r.status/100 == 2 && !r.at.Before(from) && !r.at.Add(r.took).After(to) {
			n++
		}
	}
	return n
}

// answers counts a phase's requests by status class, and the longest stretch without a 2xx.
type answers struct {
	total, ok, unavailable, tooMany, other5xx, other4xx, transport int
	codes                                                          map[string]int
	longestGap                                                     time.Duration
}

func (l *ledger) answersIn(phase string) answers {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := answers{codes: map[string]int{}}
	var last time.Time
	for _, r := range l.attempts {
		if r.phase != phase {
			continue
		}
		a.total++
		end := r.at.Add(r.took)
		switch {
		case r.status/100 == 2:
			a.ok++
			if !last.IsZero() && end.Sub(last) > a.longestGap {
				a.longestGap = end.Sub(last)
			}
			last = end
		case r.status == 0:
			a.transport++
		case r.status == http.StatusServiceUnavailable:
			a.unavailable++
		case r.status == http.StatusTooManyRequests:
			a.tooMany++
		case r.status >= 500:
			a.other5xx++
		default:
			a.other4xx++
		}
		if r.errorKey != "" {
			a.codes[fmt.Sprintf("%d %s", r.status, r.errorKey)]++
		}
	}
	return a
}

// steadyLoad sends server events and browser batches at a fixed rate until stopped, each with its
// retries; a share of the acknowledged events is sent again later, as a client that lost the
// answer would.
type steadyLoad struct {
	c           *edgeClient
	led         *ledger
	serverRate  float64 // server events per second
	browserRate float64 // browser batches (3 events) per second
	resend      float64
	seq         atomic.Int64
	wg          sync.WaitGroup
	mu          sync.Mutex
	rng         *rand.Rand
}

func (s *steadyLoad) chance(p float64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p
}

func (s *steadyLoad) run(ctx context.Context, stop <-chan struct{}) {
	srv := time.NewTicker(time.Duration(float64(time.Second) / s.serverRate))
	web := time.NewTicker(time.Duration(float64(time.Second) / s.browserRate))
	defer srv.Stop()
	defer web.Stop()
	for {
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return
		case <-stop:
			s.wg.Wait()
			return
		case <-srv.C:
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serverEvent(ctx) }()
		case <-web.C:
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.browserBatch(ctx) }()
		}
	}
}

func (s *steadyLoad) serverEvent(ctx context.Context) {
	n := s.seq.Add(1)
	e := &sent{id: fmt.Sprintf("load-%s-s%d", s.c.in.id, n)}
	s.led.add(e)
	body := s.c.serverBody(map[string]any{"eventId": e.id, "name": "install", "acquisitionId": fmt.Sprintf("load-acq-%d", n%97),
		"customerRef": fmt.Sprintf("shop-%d.load.example", n%211), "occurredAt": time.Now().UTC().Format(time.RFC3339Nano)})
	send := func() bool {
		return s.send(ctx, "/api/tracking/server-events", body, s.c.serverHeader(), false, []string{e.id})
	}
	if send() && s.chance(s.resend) {
		sleepCtx(ctx, time.Second+time.Duration(n%2000)*time.Millisecond)
		send()
	}
}

func (s *steadyLoad) browserBatch(ctx context.Context) {
	n := s.seq.Add(1)
	acq := fmt.Sprintf("load-%s-a%d", s.c.in.id, n)
	var batch []map[string]any
	var ids []string
	at := time.Now().UTC()
	for i := range 3 {
		e := &sent{id: fmt.Sprintf("load-%s-b%d-%d", s.c.in.id, n, i), browser: true}
		s.led.add(e)
		ids = append(ids, e.id)
		batch = append(batch, map[string]any{"eventId": e.id, "name": "page_view", "acquisitionId": acq,
			"occurredAt": at.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano), "url": testOrigin + "/",
			"path": "/", "firstTouch": map[string]any{"landingUrl": testOrigin + "/", "utmSource": "load"}})
	}
	body := s.c.collectBody(batch)
	send := func() bool { return s.send(ctx, "/v1/collect", body, s.c.collectHeader(), true, ids) }
	if send() && s.chance(s.resend) {
		sleepCtx(ctx, time.Second+time.Duration(n%2000)*time.Millisecond)
		send()
	}
}

// send tries up to 8 times (backoff from 300 ms to 3 s, Retry-After honoured up to 5 s) and
// records every attempt; on a 2xx the events the answer did not reject are acknowledged.
func (s *steadyLoad) send(ctx context.Context, route string, body []byte, h http.Header, browser bool, ids []string) bool {
	wait := 300 * time.Millisecond
	for range 8 {
		start := time.Now()
		status, raw, ra := s.c.post(ctx, route, body, h.Clone())
		a := attempt{at: start, took: time.Since(start), status: status, browser: browser}
		if status >= 400 {
			var e struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(raw, &e)
			a.errorKey = e.Error
		}
		s.led.record(a)
		if status/100 == 2 {
			var r struct {
				Rejected []struct{ Index int } `json:"rejected"`
			}
			_ = json.Unmarshal(raw, &r)
			refused := map[int]bool{}
			for _, x := range r.Rejected {
				refused[x.Index] = true
			}
			for i, id := range ids {
				if !refused[i] {
					s.led.ack(id, time.Now())
				}
			}
			return true
		}
		if status >= 400 && status < 500 && status != http.StatusTooManyRequests {
			return false
		}
		d := wait
		if ra > 0 {
			d = min(ra, 5*time.Second)
		}
		if !sleepCtx(ctx, d) {
			return false
		}
		wait = min(2*wait, 3*time.Second)
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// waitUntil polls cond every half second until it holds or limit has passed.
func waitUntil(ctx context.Context, limit time.Duration, cond func(context.Context) (bool, string)) bool {
	for end := time.Now().Add(limit); ; {
		if ok, _ := cond(ctx); ok {
			return true
		}
		if time.Now().After(end) || !sleepCtx(ctx, 500*time.Millisecond) {
			return false
		}
	}
}
