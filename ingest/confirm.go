package ingest

import (
	"context"
	"log/slog"
	"sync"
)

// confirmation is one acknowledged event whose reservation becomes "seen"; done is closed once the
// confirm was attempted (whatever its outcome).
type confirmation struct {
	scope, eventID string
	done           chan struct{}
}

// manyConfirmer confirms a batch in one Redis round trip (RedisDeduper: a pipeline).
type manyConfirmer interface {
	ConfirmMany(ctx context.Context, cs []confirmation) error
}

// confirmBatcher confirms reservations off the request's path, batched. Confirms queue while one
// batch is in flight and go together in the next, so under load a batch of events costs one Redis
// round trip instead of one each, and idle there is no goroutine, ticker or delay at all: the
// first confirm starts the flushing goroutine, which ends when it finds the queue empty. The work
// runs on its own context (settleTimeout), never on a request's, so a client that goes away cannot
// cancel it.
type confirmBatcher struct {
	d   Deduper
	log *slog.Logger

	mu      sync.Mutex
	queue   []confirmation
	running bool
}

func newConfirmBatcher(d Deduper, log *slog.Logger) *confirmBatcher {
	return &confirmBatcher{d: d, log: log}
}

// add queues c; it never blocks on Redis (it is called from the producer's promise goroutine).
func (b *confirmBatcher) add(c confirmation) {
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.running {
		b.mu.Unlock()
		return
	}
	b.running = true
	b.mu.Unlock()
	go b.flushAll()
}

func (b *confirmBatcher) flushAll() {
	for {
		b.mu.Lock()
		batch := b.queue
		b.queue = nil
		if len(batch) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		var err error
		if m, ok := b.d.(manyConfirmer); ok {
			err = m.ConfirmMany(ctx, batch)
		} else {
			for _, c := range batch {
				err = b.d.Confirm(ctx, c.scope, c.eventID)
			}
		}
		cancel()
		if err != nil {
			// The events are durable; storage deduplication covers a retry that Redis cannot recognise.
			b.log.Warn("dedup confirm failed", "err", err, "events", len(batch))
		}
		for _, c := range batch {
			close(c.done)
		}
	}
}
