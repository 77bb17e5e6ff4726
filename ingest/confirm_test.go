package ingest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// slowConfirmer records each batch and holds the first until released, so that confirms queue.
type slowConfirmer struct {
	mu      sync.Mutex
	batches [][]string
	hold    chan struct{}
}

func (f *slowConfirmer) ConfirmMany(_ context.Context, cs []confirmation) error {
	f.mu.Lock()
	first := len(f.batches) == 0
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.eventID)
	}
	f.batches = append(f.batches, ids)
	f.mu.Unlock()
	if first {
		<-f.hold
	}
	return nil
}
func (f *slowConfirmer) Confirm(context.Context, string, string) error         { panic("batched") }
func (f *slowConfirmer) Release(context.Context, string, string, string) error { return nil }

// TestConfirmBatcher: confirms that arrive while a batch is in flight go together in the next one,
// each waiter is told when its own confirm ran, and an idle batcher leaves no goroutine behind
// (a later confirm starts a new one).
func TestConfirmBatcher(t *testing.T) {
	f := &slowConfirmer{hold: make(chan struct{})}
	b := newConfirmBatcher(f, slog.New(slog.NewTextHandler(io.Discard, nil)))
	add := func(id string) chan struct{} {
		done := make(chan struct{})
		b.add(confirmation{scope: "s", eventID: id, done: done})
		return done
	}
	first := add("a")
	for len(batchesOf(f)) == 0 {
		time.Sleep(time.Millisecond)
	}
	rest := []chan struct{}{add("b"), add("c"), add("d")}
	close(f.hold)
	for _, d := range append(rest, first) {
		select {
		case <-d:
		case <-time.After(5 * time.Second):
			t.Fatal("a confirm was never signalled")
		}
	}
	if got := batchesOf(f); len(got) != 2 || len(got[0]) != 1 || len(got[1]) != 3 {
		t.Fatalf("batches %v, want [a] then [b c d]", got)
	}
	b.mu.Lock()
	running := b.running
	b.mu.Unlock()
	for i := 0; running && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		b.mu.Lock()
		running = b.running
		b.mu.Unlock()
	}
	if running {
		t.Fatal("the batcher's goroutine did not end when idle")
	}
	select {
	case <-add("e"):
	case <-time.After(5 * time.Second):
		t.Fatal("a confirm after idling was never signalled")
	}
}

func batchesOf(f *slowConfirmer) [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.batches...)
}
