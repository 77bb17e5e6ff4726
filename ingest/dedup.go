package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Deduper remembers server event IDs. The edge reserves an ID before producing and confirms it only
// after Kafka acknowledged the write, so a failed write releases the ID and the client's retry is
// not mistaken for a duplicate (the failure mode where an event is counted zero times).
type Deduper interface {
	// Reserve returns stateNew when the caller now owns the ID, stateDone when it was already
	// accepted, statePending when another request holds it.
	Reserve(ctx context.Context, scope, eventID string) (reservation, error)
	Confirm(ctx context.Context, scope, eventID string) error
	Release(ctx context.Context, scope, eventID string) error
}

type reservation int

const (
	stateNew reservation = iota
	stateDone
	statePending
)

// RedisDeduper implements Deduper with one key per (scope, event ID).
type RedisDeduper struct {
	Client *redis.Client
	Prefix string
	// TTL of a confirmed ID; storage deduplication covers anything older.
	TTL time.Duration
	// PendingTTL bounds a reservation whose holder died between reserve and confirm.
	PendingTTL time.Duration
}

var _ Deduper = (*RedisDeduper)(nil)

const (
	pendingValue = "p"
	doneValue    = "d"
)

func (d *RedisDeduper) key(scope, eventID string) string {
	sum := sha256.Sum256([]byte(eventID))
	return d.Prefix + "dedup:" + scope + ":" + hex.EncodeToString(sum[:16])
}

// Reserve implements Deduper.
func (d *RedisDeduper) Reserve(ctx context.Context, scope, eventID string) (reservation, error) {
	k := d.key(scope, eventID)
	err := d.Client.SetArgs(ctx, k, pendingValue, redis.SetArgs{Mode: "NX", TTL: d.PendingTTL}).Err()
	if err == nil {
		return stateNew, nil
	}
	if !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("dedup reserve: %w", err)
	}
	v, err := d.Client.Get(ctx, k).Result()
	switch {
	case errors.Is(err, redis.Nil):
		// Released between our SET and GET: try once more rather than report a phantom state.
		return d.Reserve(ctx, scope, eventID)
	case err != nil:
		return 0, fmt.Errorf("dedup read: %w", err)
	case v == doneValue:
		return stateDone, nil
	default:
		return statePending, nil
	}
}

// Confirm implements Deduper.
func (d *RedisDeduper) Confirm(ctx context.Context, scope, eventID string) error {
	if err := d.Client.Set(ctx, d.key(scope, eventID), doneValue, d.TTL).Err(); err != nil {
		return fmt.Errorf("dedup confirm: %w", err)
	}
	return nil
}

var releaseIfPending = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// Release implements Deduper; it never removes a confirmed ID.
func (d *RedisDeduper) Release(ctx context.Context, scope, eventID string) error {
	if err := releaseIfPending.Run(ctx, d.Client, []string{d.key(scope, eventID)}, pendingValue).Err(); err != nil {
		return fmt.Errorf("dedup release: %w", err)
	}
	return nil
}
