package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Ingest routes, as the ledger names them.
const (
	routeServer  = "/api/tracking/server-events"
	routeCollect = "/v1/collect"
)

// loadConfig is the steady load: bounded in rate, in attempts per request and in time.
type loadConfig struct {
	ServerRate  float64 // server events per second
	BrowserRate float64 // browser batches per second
	BatchEvents int     // events per browser batch
	Resend      float64 // share of acknowledged events sent again, as a client that lost the answer would
	Concurrent  float64 // share of server events whose first send goes out twice at once (a double click)
	Abandon     float64 // share of server events whose first send the client abandons after 1-30 ms (it went away)
	Attempts    int     // sends per event before the client gives up (transport errors, 429, 5xx)
	MaxInFlight int     // events being sent at once; a tick beyond it is skipped and counted
	Timeout     time.Duration
}

// target is where and as whom the load sends.
type target struct {
	ingestURL string
	teamSlug  string
	publicKey string
	private   string
	origin    string
}

// load sends server events and browser batches through the edge, as a publisher's server and
// tracker.js would: event IDs stable across retries, backoff with Retry-After, resends.
type load struct {
	cfg    loadConfig
	to     target
	led    *ledger
	runID  string
	client *http.Client

	seq      atomic.Int64
	inFlight chan struct{}
	wg       sync.WaitGroup
	skipped  atomic.Int64

	mu       sync.Mutex
	browsers []browser // recent browsers: follow-up batches and server events refer to them
	rng      *rand.Rand
}

type browser struct{ acq, gclid string }

func newLoad(cfg loadConfig, to target, led *ledger, runID string) *load {
	return &load{cfg: cfg, to: to, led: led, runID: runID,
		client:   &http.Client{Timeout: cfg.Timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		inFlight: make(chan struct{}, cfg.MaxInFlight),
		rng:      rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))}
}

// run sends until stop is closed, then waits for every event's retries to end (bounded by
// Attempts and the backoff). ctx ends everything at once.
func (l *load) run(ctx context.Context, stop <-chan struct{}) {
	srv := time.NewTicker(time.Duration(float64(time.Second) / l.cfg.ServerRate))
	web := time.NewTicker(time.Duration(float64(time.Second) / l.cfg.BrowserRate))
	defer srv.Stop()
	defer web.Stop()
	for {
		select {
		case <-ctx.Done():
			l.wg.Wait()
			return
		case <-stop:
			l.wg.Wait()
			return
		case <-srv.C:
			l.spawn(func() { l.serverEvent(ctx) })
		case <-web.C:
			l.spawn(func() { l.browserBatch(ctx) })
		}
	}
}

func (l *load) spawn(f func()) {
	select {
	case l.inFlight <- struct{}{}:
	default:
		l.skipped.Add(1)
		return
	}
	l.wg.Add(1)
	go func() {
		defer func() { <-l.inFlight; l.wg.Done() }()
		f()
	}()
}

func (l *load) chance(p float64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.Float64() < p
}

func (l *load) intn(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.IntN(n)
}

var serverNames = []string{"install", "trial_started", "paid", "identified", "qualified", "trial_converted", "canceled"}

// serverEvent sends one verified lifecycle event. Most name a browser of the load (its
// acquisition ID), so the identity join links and resolves them; every one names a shop.
func (l *load) serverEvent(ctx context.Context) {
	n := l.seq.Add(1)
	e := &sentEvent{ID: fmt.Sprintf("f%s-s%d", l.runID, n), Kind: kindServer, Origin: originLoad,
		Name: serverNames[int(n)%len(serverNames)], Shop: fmt.Sprintf("shop-%d.faults.example", n%50),
		At: time.Now().UTC().Truncate(time.Millisecond)}
	if b, ok := l.recentBrowser(); ok && l.chance(0.8) {
		e.Acq = b.acq
	}
	body := map[string]any{"teamSlug": l.to.teamSlug, "publicKey": l.to.publicKey, "eventId": e.ID, "name": e.Name,
		"customerRef": e.Shop, "occurredAt": e.At.Format(time.RFC3339Nano)}
	if e.Acq != "" {
		body["acquisitionId"] = e.Acq
	}
	if e.Name == "paid" {
		body["amountCents"], body["currency"] = 1999, "USD"
	}
	raw, _ := json.Marshal(body)
	l.led.add(e)
	send := func() bool { return l.sendServer(ctx, raw, e.ID) }
	abandon := l.chance(l.cfg.Abandon)
	if abandon {
		// The client goes away mid-request (a timeout, a deploy); it will retry the same event ID.
		l.led.abandoned(e.ID)
		actx, cancel := context.WithTimeout(ctx, time.Duration(1+l.intn(30))*time.Millisecond)
		l.do(actx, routeServer, raw, l.serverHeader(), true)
		cancel()
		// Its retry comes after the usual first backoff: by then the abandoned write has finished
		// (or, with Kafka down, is still within the produce timeout), so "in progress" would mean
		// the edge forgot to settle the ID.
		sleep(ctx, 500*time.Millisecond+time.Duration(l.intn(250))*time.Millisecond)
	}
	// Never both: the event_in_progress answers after an abandoned send must have one cause.
	if !abandon && l.chance(l.cfg.Concurrent) {
		var other sync.WaitGroup
		other.Add(1)
		go func() { defer other.Done(); send() }()
		send()
		other.Wait()
	} else if !send() {
		return
	}
	l.maybeResend(ctx, send)
}

// browserBatch sends one batch of a new browser, or a follow-up batch of a recent one.
func (l *load) browserBatch(ctx context.Context) {
	n := l.seq.Add(1)
	b, follow := l.recentBrowser()
	if !follow || !l.chance(0.3) {
		b = browser{acq: fmt.Sprintf("f%s-a%d", l.runID, n)}
		if l.chance(0.3) {
			b.gclid = "gclid-" + b.acq
		}
		l.remember(b)
	}
	start := time.Now().UTC().Truncate(time.Millisecond)
	batch := make([]map[string]any, l.cfg.BatchEvents)
	ids := make([]string, l.cfg.BatchEvents)
	for i := range batch {
		name := "page_view"
		if i == len(batch)-1 {
			name = "signup_click"
		}
		e := &sentEvent{ID: fmt.Sprintf("f%s-b%d-%d", l.runID, n, i), Kind: kindBrowser, Origin: originLoad,
			Acq: b.acq, Gclid: b.gclid, Name: name, At: start.Add(time.Duration(i) * time.Millisecond)}
		l.led.add(e)
		ids[i] = e.ID
		url := fmt.Sprintf("https://faults.example/p/%d", i)
		batch[i] = map[string]any{"eventId": e.ID, "name": name, "occurredAt": e.At.Format(time.RFC3339Nano),
			"acquisitionId": b.acq, "url": url, "path": fmt.Sprintf("/p/%d", i), "title": "Faults",
			"firstTouch": map[string]any{"landingUrl": "https://faults.example/", "utmSource": "faults", "gclid": b.gclid}}
	}
	raw, _ := json.Marshal(map[string]any{"key": l.to.publicKey, "batch": batch})
	send := func() bool { return l.sendCollect(ctx, raw, ids) }
	if send() {
		l.maybeResend(ctx, send)
	}
}

func (l *load) maybeResend(ctx context.Context, send func() bool) {
	if !l.chance(l.cfg.Resend) {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second + time.Duration(l.intn(2000))*time.Millisecond):
	}
	send()
}

func (l *load) recentBrowser() (browser, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.browsers) == 0 {
		return browser{}, false
	}
	return l.browsers[l.rng.IntN(len(l.browsers))], true
}

func (l *load) remember(b browser) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.browsers) >= 64 {
		l.browsers = l.browsers[1:]
	}
	l.browsers = append(l.browsers, b)
}

func (l *load) serverHeader() http.Header {
	return http.Header{"Authorization": {"Bearer " + l.to.private}, "Content-Type": {"application/json"}}
}

func (l *load) sendServer(ctx context.Context, body []byte, id string) bool {
	return l.withRetries(ctx, routeServer, body, l.serverHeader(), func(_ []byte, at time.Time) { l.led.ack(at, id) },
		func(code string) { l.led.refused(id, code) })
}

func (l *load) sendCollect(ctx context.Context, body []byte, ids []string) bool {
	h := http.Header{"Origin": {l.to.origin}, "Content-Type": {"text/plain;charset=UTF-8"}}
	return l.withRetries(ctx, routeCollect, body, h, func(resp []byte, at time.Time) {
		var r struct {
			Rejected []struct{ Index int } `json:"rejected"`
		}
		_ = json.Unmarshal(resp, &r)
		refused := map[int]bool{}
		for _, x := range r.Rejected {
			refused[x.Index] = true
		}
		for i, id := range ids {
			if !refused[i] {
				l.led.ack(at, id)
			}
		}
	}, nil)
}

// withRetries sends until a 2xx (then onAck), a final refusal (4xx other than 429), or the attempts
// run out; onRefusal, when set, hears the error code of every refusal. Waits double from 500 ms,
// with jitter; a Retry-After is honoured up to 5 s.
func (l *load) withRetries(ctx context.Context, route string, body []byte, h http.Header, onAck func([]byte, time.Time),
	onRefusal func(code string)) bool {
	wait := 500 * time.Millisecond
	for attempt := 1; attempt <= l.cfg.Attempts; attempt++ {
		status, resp, retryAfter := l.do(ctx, route, body, h, false)
		if status >= 400 && onRefusal != nil {
			var e struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(resp, &e)
			onRefusal(e.Error)
		}
		switch {
		case status/100 == 2:
			onAck(resp, time.Now())
			return true
		case status != 0 && status != http.StatusTooManyRequests && status < 500:
			return false
		}
		d := wait + time.Duration(l.intn(int(wait/time.Millisecond/4)+1))*time.Millisecond
		if retryAfter > 0 {
			d = min(retryAfter, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
		wait = min(2*wait, 4*time.Second)
	}
	return false
}

// do is one HTTP attempt, recorded in the ledger; abandoned says the client cancels it on purpose.
func (l *load) do(ctx context.Context, route string, body []byte, h http.Header, abandoned bool) (int, []byte, time.Duration) {
	r := request{Route: route, Phase: l.led.currentPhase(), Start: time.Now(), Abandoned: abandoned}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.to.ingestURL+route, bytes.NewReader(body))
	if err != nil {
		panic(err) // a malformed URL is the suite's bug
	}
	req.Header = h.Clone()
	resp, err := l.client.Do(req)
	var raw []byte
	var retryAfter time.Duration
	if err == nil {
		raw, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		r.Status = resp.StatusCode
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
	}
	r.Duration = time.Since(r.Start)
	if err != nil {
		r.Status, r.Err = 0, err.Error()
	} else if r.Status >= 400 {
		r.BadShape = !isErrorShape(raw)
	}
	l.led.record(r)
	return r.Status, raw, retryAfter
}
