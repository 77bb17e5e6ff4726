package redisx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The one Redis lease of the project: SET NX PX to take it, compare-and-extend to renew it,
// compare-and-delete to release it. A lease expires if its holder dies, so a crash blocks others
// for at most its TTL. It is not a fencing token: a holder that stalls past its TTL may overlap the
// next one, so what it guards must tolerate a rare overlap (migrations are idempotent, syncs resume
// from cursors, uploads carry stable transaction IDs).

// LeaseClient is the part of a Redis client a lease uses.
type LeaseClient interface {
	redis.Scripter
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
}

var (
	_ LeaseClient = (*redis.Client)(nil)
	_ LeaseClient = (*redis.ClusterClient)(nil)
	_ LeaseClient = redis.UniversalClient(nil)
)

// ErrLeaseLost is the cause of a Hold context cancelled because the lease was lost.
var ErrLeaseLost = errors.New("lease lost")

var (
	extendScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)
)

// Lease is a held lease on one key.
type Lease struct {
	client     LeaseClient
	key, token string
	ttl        time.Duration
}

// TryAcquire takes key's lease for ttl, or returns nil (and no error) when another holder has it.
func TryAcquire(ctx context.Context, c LeaseClient, key string, ttl time.Duration) (*Lease, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	ls := &Lease{client: c, key: key, token: hex.EncodeToString(tok[:]), ttl: ttl}
	err := c.SetArgs(ctx, key, ls.token, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("lease %s: %w", key, err)
	}
	return ls, nil
}

// Extend renews the lease for another TTL; false means it was lost (expired, maybe taken).
func (ls *Lease) Extend(ctx context.Context) (bool, error) {
	n, err := extendScript.Run(ctx, ls.client, []string{ls.key}, ls.token, ls.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("extend lease %s: %w", ls.key, err)
	}
	return n == 1, nil
}

// Release gives the lease up if this holder still has it.
func (ls *Lease) Release(ctx context.Context) error {
	if err := releaseScript.Run(ctx, ls.client, []string{ls.key}, ls.token).Err(); err != nil {
		return fmt.Errorf("release lease %s: %w", ls.key, err)
	}
	return nil
}

// Hold renews the lease every third of its TTL until stop is called, and returns a context that is
// cancelled (cause ErrLeaseLost) if the lease is lost: another holder took it, or renewals failed
// for a whole TTL.
func (ls *Lease) Hold(ctx context.Context) (held context.Context, stop func()) {
	held, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(ls.ttl / 3)
		defer t.Stop()
		renewed := time.Now()
		for {
			select {
			case <-done:
				return
			case <-held.Done():
				return
			case <-t.C:
			}
			rctx, rcancel := context.WithTimeout(held, ls.ttl/3)
			ok, err := ls.Extend(rctx)
			rcancel()
			switch {
			case err == nil && ok:
				renewed = time.Now()
			case err == nil:
				cancel(ErrLeaseLost)
				return
			case time.Since(renewed) >= ls.ttl:
				cancel(fmt.Errorf("%w: %v", ErrLeaseLost, err))
				return
			}
		}
	}()
	return held, func() {
		close(done)
		wg.Wait()
		cancel(context.Canceled)
	}
}

// Locker waits for a lease: it serialises rare, short operations such as migrations.
type Locker struct {
	Client LeaseClient
	Prefix string
	// Poll is how often a waiting caller retries.
	Poll time.Duration
}

// Lock waits until it holds name or ctx ends. The lease expires after ttl so a crashed holder
// cannot block others forever.
func (l Locker) Lock(ctx context.Context, name string, ttl time.Duration) (func(context.Context) error, error) {
	poll := l.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		ls, err := TryAcquire(ctx, l.Client, l.Prefix+"lock:"+name, ttl)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if ls != nil {
			return ls.Release, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", name, ctx.Err())
		case <-time.After(poll):
		}
	}
}
