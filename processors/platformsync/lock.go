package platformsync

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

// ErrAlreadyRunning: another run of the same app holds its lock (in this or another process).
var ErrAlreadyRunning = errors.New("a sync of this app is already running")

// errLockLost cancels a run whose lease could not be renewed: another process may now hold it.
var errLockLost = errors.New("lost the app's sync lock")

// Locks hands out one lease per (workspace, app) in Redis, so that scheduled and on-demand runs
// never sync the same app at once, in one process or across many: SET NX PX to take it, a
// compare-and-expire script to renew it while the run lasts, compare-and-delete to release it.
// The lease expires if its holder dies, so a crash blocks the app for at most TTL.
type Locks struct {
	Client LockClient
	Prefix string
	TTL    time.Duration
}

// LockClient is the part of *redis.Client the locks use.
type LockClient interface {
	redis.Scripter
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
}

var _ LockClient = (*redis.Client)(nil)

var (
	renewScript = redis.NewScript(`
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

func (l *Locks) ttl() time.Duration {
	if l.TTL > 0 {
		return l.TTL
	}
	return time.Minute
}

func (l *Locks) key(ws, app string) string { return l.Prefix + "platformsync:lock:" + ws + "/" + app }

// Lease is a held lock.
type Lease struct {
	l          *Locks
	key, token string
}

// Acquire takes the app's lock or fails at once with ErrAlreadyRunning.
func (l *Locks) Acquire(ctx context.Context, ws, app string) (*Lease, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	le := &Lease{l: l, key: l.key(ws, app), token: hex.EncodeToString(tok[:])}
	err := l.Client.SetArgs(ctx, le.key, le.token, redis.SetArgs{Mode: "NX", TTL: l.ttl()}).Err()
	if errors.Is(err, redis.Nil) {
		return nil, ErrAlreadyRunning
	}
	if err != nil {
		return nil, fmt.Errorf("sync lock: %w", err)
	}
	return le, nil
}

// Hold renews the lease every third of its TTL until stop is called, and returns a context that
// is cancelled (cause errLockLost) if the lease is lost: another holder took it, or renewals
// failed for a whole TTL.
func (le *Lease) Hold(ctx context.Context) (held context.Context, stop func()) {
	held, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ttl := le.l.ttl()
		t := time.NewTicker(ttl / 3)
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
			rctx, rcancel := context.WithTimeout(held, ttl/3)
			n, err := renewScript.Run(rctx, le.l.Client, []string{le.key}, le.token, ttl.Milliseconds()).Int()
			rcancel()
			switch {
			case err == nil && n == 1:
				renewed = time.Now()
			case err == nil:
				cancel(errLockLost)
				return
			case time.Since(renewed) >= ttl:
				cancel(fmt.Errorf("%w: %v", errLockLost, err))
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

// Release frees the lease if this holder still has it.
func (le *Lease) Release(ctx context.Context) error {
	if err := releaseScript.Run(ctx, le.l.Client, []string{le.key}, le.token).Err(); err != nil {
		return fmt.Errorf("release sync lock: %w", err)
	}
	return nil
}
