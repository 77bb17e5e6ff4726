package uploader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// leases are per-workspace Redis leases (SET NX PX, compare-and-delete release, compare-and-extend)
// so that several uploader instances never send or poll the same rows at once. An instance that
// finds a workspace leased skips it for the round instead of waiting (redisx.Locker waits). A lease
// is not a fencing token: should one expire mid-request, the stable transaction IDs make the
// platform deduplicate the resend.
type leases struct {
	client *redis.Client
	prefix string
	ttl    time.Duration
}

var (
	leaseRelease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)
	leaseExtend = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
)

// lease is one held lease.
type lease struct {
	l     *leases
	key   string
	token string
}

// tryAcquire takes name's lease, or returns nil when another holder has it.
func (l *leases) tryAcquire(ctx context.Context, name string) (*lease, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	ls := &lease{l: l, key: l.prefix + "lock:" + name, token: hex.EncodeToString(tok[:])}
	err := l.client.SetArgs(ctx, ls.key, ls.token, redis.SetArgs{Mode: "NX", TTL: l.ttl}).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	return ls, nil
}

// extend renews the lease for another ttl; false means it was lost (expired and taken).
func (ls *lease) extend(ctx context.Context) (bool, error) {
	n, err := leaseExtend.Run(ctx, ls.l.client, []string{ls.key}, ls.token, ls.l.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("extend lease: %w", err)
	}
	return n == 1, nil
}

// release gives the lease up if it is still held.
func (ls *lease) release(ctx context.Context) error {
	return leaseRelease.Run(ctx, ls.l.client, []string{ls.key}, ls.token).Err()
}
