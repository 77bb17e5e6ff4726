package redisx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Locker is a single-instance Redis lease lock (SET NX PX plus a compare-and-delete release). It
// serialises rare, short operations such as migrations; it is not a fencing lock for data writes.
type Locker struct {
	Client *redis.Client
	Prefix string
	// Poll is how often a waiting caller retries.
	Poll time.Duration
}

var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// Lock waits until it holds name or ctx ends. The lease expires after ttl so a crashed holder
// cannot block others forever.
func (l Locker) Lock(ctx context.Context, name string, ttl time.Duration) (func(context.Context) error, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(tok[:])
	key := l.Prefix + "lock:" + name
	poll := l.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		err := l.Client.SetArgs(ctx, key, token, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
		if err == nil {
			return func(ctx context.Context) error {
				return releaseScript.Run(ctx, l.Client, []string{key}, token).Err()
			}, nil
		}
		if !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", name, ctx.Err())
		case <-time.After(poll):
		}
	}
}
