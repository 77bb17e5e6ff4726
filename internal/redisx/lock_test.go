package redisx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// One lease per key: a second taker gets nil, only the holder extends or releases it, and Hold's
// context ends with ErrLeaseLost once someone else took the key.
func TestLease(t *testing.T) {
	ctx := testenv.Ctx(t)
	rc := testenv.RedisConfig(t)
	rdb, err := redisx.Open(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	key := rc.KeyPrefix + "lease-test"
	a, err := redisx.TryAcquire(ctx, rdb, key, 300*time.Millisecond)
	if err != nil || a == nil {
		t.Fatalf("first acquire: %v %v", a, err)
	}
	if b, err := redisx.TryAcquire(ctx, rdb, key, time.Second); err != nil || b != nil {
		t.Fatalf("second acquire while held: %v %v", b, err)
	}
	if ok, err := a.Extend(ctx); err != nil || !ok {
		t.Fatalf("extend by the holder: %v %v", ok, err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Extend(ctx); ok {
		t.Fatal("extended a released lease")
	}

	c, err := redisx.TryAcquire(ctx, rdb, key, 300*time.Millisecond)
	if err != nil || c == nil {
		t.Fatalf("acquire after release: %v %v", c, err)
	}
	held, stop := c.Hold(ctx)
	defer stop()
	// Another holder takes the key (as after an expiry): the next renewal finds it lost.
	if err := rdb.Set(ctx, key, "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
		if !errors.Is(context.Cause(held), redisx.ErrLeaseLost) {
			t.Fatalf("cause %v, want ErrLeaseLost", context.Cause(held))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Hold did not notice the lost lease")
	}
	if err := c.Release(ctx); err != nil { // not the holder any more: a no-op
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, key).Result(); v != "someone-else" {
		t.Fatalf("release of a lost lease deleted the new holder's key: %q", v)
	}
}
