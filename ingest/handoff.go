package ingest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// The producer's linger (--kafka-linger) batches the records of concurrent requests, which at 256
// connections cut the broker's CPU per event by half; but a record that no other request will join
// only waits it out. At 64 connections that wait made the edge's answer time (docs/BENCHMARKS.md,
// "Records handed over when no request is on its way"). So the edge counts the requests between a
// read body and the hand-over of their records to the producer, and when the last one leaves, it
// tells the producer to send what it holds now. Under load a request is always on its way and the
// linger batches as before; idle, a record goes at once.

// flusher sends what a producer buffers without waiting for it (kgo.Client: Flush).
type flusher interface {
	Flush(ctx context.Context) error
}

// doneCtx makes kgo's Flush stop every linger and return at once instead of waiting for the acks:
// the edge waits on each record's promise, not on the whole buffer.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// handoff counts the requests on their way to the producer.
type handoff struct {
	f       flusher // nil: records wait out the linger
	pending atomic.Int64
	flushes prometheus.Counter
}

// arrive counts a request on its way; the returned func (safe to call more than once, and after
// the request's records are handed over or it is refused) takes it off again.
func (h *handoff) arrive() func() {
	if h.f == nil {
		return func() {}
	}
	h.pending.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			if h.pending.Add(-1) == 0 {
				h.flushes.Inc()
				_ = h.f.Flush(doneCtx)
			}
		})
	}
}
