package platformsync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
)

// A lease excludes a second holder, is renewed while held, and cancels its holder's context
// when another process deletes or takes it.
func TestLocks(t *testing.T) {
	rdb, rc := testenv.Redis(t)
	ctx := testenv.Ctx(t)
	l := &Locks{Client: rdb, Prefix: rc.KeyPrefix, TTL: 300 * time.Millisecond}
	le, err := l.Acquire(ctx, "ws", "app")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "ws", "app"); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second acquire: %v", err)
	}
	other, err := l.Acquire(ctx, "ws", "other-app")
	if err != nil {
		t.Fatalf("another app's lock: %v", err)
	}
	_ = other.Release(ctx)

	held, stop := le.Hold(ctx)
	time.Sleep(time.Second) // three TTLs: only renewals keep it
	if held.Err() != nil {
		t.Fatalf("lease lost while held: %v", context.Cause(held))
	}
	if _, err := l.Acquire(ctx, "ws", "app"); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("acquire of a renewed lease: %v", err)
	}
	stop()
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}

	le, err = l.Acquire(ctx, "ws", "app")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	held, stop = le.Hold(ctx)
	defer stop()
	if err := rdb.Set(ctx, l.key("ws", "app"), "someone-else", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
		if !errors.Is(context.Cause(held), errLockLost) {
			t.Errorf("cause %v", context.Cause(held))
		}
	case <-time.After(2 * time.Second):
		t.Fatal("holder not told that its lease was taken")
	}
	// Release leaves another holder's lock alone.
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, l.key("ws", "app")).Result(); v != "someone-else" {
		t.Errorf("release deleted another holder's lock: %q", v)
	}
}
