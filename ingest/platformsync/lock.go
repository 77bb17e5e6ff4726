package platformsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/revtrack/revtrack/internal/redisx"
)

// ErrAlreadyRunning: another run of the same app holds its lock (in this or another process).
var ErrAlreadyRunning = errors.New("a sync of this app is already running")

// errLockLost cancels a run whose lease could not be renewed: another process may now hold it.
var errLockLost = redisx.ErrLeaseLost

// Locks hands out one lease per (workspace, app) in Redis (redisx.Lease), so that scheduled and
// on-demand runs never sync the same app at once, in one process or across many; the run renews
// it while it lasts, and a crashed holder blocks the app for at most TTL.
type Locks struct {
	Client LockClient
	Prefix string
	TTL    time.Duration
}

// LockClient is the part of redis.UniversalClient the locks use.
type LockClient = redisx.LeaseClient

func (l *Locks) ttl() time.Duration {
	if l.TTL > 0 {
		return l.TTL
	}
	return time.Minute
}

func (l *Locks) key(ws, app string) string { return l.Prefix + "platformsync:lock:" + ws + "/" + app }

// Lease is a held lock.
type Lease struct{ *redisx.Lease }

// Acquire takes the app's lock or fails at once with ErrAlreadyRunning.
func (l *Locks) Acquire(ctx context.Context, ws, app string) (*Lease, error) {
	ls, err := redisx.TryAcquire(ctx, l.Client, l.key(ws, app), l.ttl())
	switch {
	case err != nil:
		return nil, fmt.Errorf("sync lock: %w", err)
	case ls == nil:
		return nil, ErrAlreadyRunning
	}
	return &Lease{ls}, nil
}
