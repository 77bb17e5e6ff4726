package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Admissions of concurrent requests share one Redis round trip (issue 17, docs/BENCHMARKS.md,
// "Admissions in one round trip"). At 256 connections the edge sent one script per request, and
// both the edge and Redis spent most of that share on a write and a read per script. Admissions now
// queue while one round trip is in flight and go together in the next, as the confirms do
// (confirmBatcher): under load a round trip carries many scripts, and idle a request runs its own
// script at once, on its own goroutine, with no timer, delay or extra command.

// edgeManyAdmitter runs several admissions in one round trip (RedisAdmitter: a pipeline).
type edgeManyAdmitter interface {
	edgeAdmitter
	AdmitEdgeMany(ctx context.Context, qs []edgeQuery) ([]edgeResult, []error)
}

var _ edgeManyAdmitter = (*RedisAdmitter)(nil)

// admitCall is one request's admission; done is closed once r and err are set.
type admitCall struct {
	q    edgeQuery
	r    edgeResult
	err  error
	done chan struct{}
}

// admitPipeline batches AdmitEdge calls. At most one round trip is in flight: the request that
// finds none runs the queue (itself, and whatever queued meanwhile) on its own goroutine; if more
// queued while it ran, a goroutine carries on until the queue is empty. A round trip runs on its own
// context, bounded by timeout, so a client that goes away cannot cancel the others' admissions; each
// request still stops waiting when its own context ends.
type admitPipeline struct {
	a       edgeManyAdmitter
	timeout time.Duration
	sizes   prometheus.Observer

	mu      sync.Mutex
	queue   []*admitCall
	running bool
}

func newAdmitPipeline(a edgeManyAdmitter, timeout time.Duration, sizes prometheus.Observer) *admitPipeline {
	return &admitPipeline{a: a, timeout: timeout, sizes: sizes}
}

// AdmitEdge implements edgeAdmitter.
func (p *admitPipeline) AdmitEdge(ctx context.Context, q edgeQuery) (edgeResult, error) {
	if err := ctx.Err(); err != nil { // a request already given up is not counted
		return edgeResult{}, fmt.Errorf("admit: %w", err)
	}
	c := &admitCall{q: q, done: make(chan struct{})}
	p.mu.Lock()
	p.queue = append(p.queue, c)
	lead := !p.running
	p.running = true
	p.mu.Unlock()
	if lead && p.runOnce() {
		go p.drain()
	}
	select {
	case <-c.done:
		return c.r, c.err
	case <-ctx.Done():
		return edgeResult{}, fmt.Errorf("admit: %w", ctx.Err())
	}
}

func (p *admitPipeline) drain() {
	for p.runOnce() {
	}
}

// runOnce sends the queue in one round trip and reports whether more queued meanwhile; when none
// did, the pipeline is idle again.
func (p *admitPipeline) runOnce() bool {
	p.mu.Lock()
	batch := p.queue
	p.queue = nil
	p.mu.Unlock()
	if len(batch) > 0 {
		p.send(batch)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.running = false
		return false
	}
	return true
}

func (p *admitPipeline) send(batch []*admitCall) {
	p.sizes.Observe(float64(len(batch)))
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if len(batch) == 1 {
		c := batch[0]
		c.r, c.err = p.a.AdmitEdge(ctx, c.q)
		close(c.done)
		return
	}
	qs := make([]edgeQuery, len(batch))
	for i, c := range batch {
		qs[i] = c.q
	}
	rs, errs := p.a.AdmitEdgeMany(ctx, qs)
	for i, c := range batch {
		c.r, c.err = rs[i], errs[i]
		close(c.done)
	}
}

// AdmitEdgeMany runs edgeScript once per query in one pipeline. A Redis that lost its scripts (a
// restart, SCRIPT FLUSH) answers NOSCRIPT to each; those run again with the script's source, which
// also loads it, as Script.Run does for one call.
func (a *RedisAdmitter) AdmitEdgeMany(ctx context.Context, qs []edgeQuery) ([]edgeResult, []error) {
	rs, errs := make([]edgeResult, len(qs)), make([]error, len(qs))
	cmds := make([]*redis.Cmd, len(qs))
	run := func(idx []int, eval bool) {
		_, _ = a.Deduper.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range idx {
				keys, args := a.edgeCall(qs[i])
				if eval {
					cmds[i] = edgeScript.Eval(ctx, p, keys, args...)
				} else {
					cmds[i] = edgeScript.EvalSha(ctx, p, keys, args...)
				}
			}
			return nil
		})
	}
	all := make([]int, len(qs))
	for i := range all {
		all[i] = i
	}
	run(all, false)
	var again []int
	for i, c := range cmds {
		if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		run(again, true)
	}
	for i, c := range cmds {
		res, err := c.Slice()
		if err == nil && len(res) == 0 {
			err = errors.New("empty answer")
		}
		if err != nil {
			errs[i] = fmt.Errorf("admit: %w", err)
			continue
		}
		rs[i] = parseEdgeResult(res)
	}
	return rs, errs
}
