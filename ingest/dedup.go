package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Deduper remembers server event IDs. The edge reserves an ID before producing (Admitter.Admit) and
// confirms it only after Kafka acknowledged the write, so a failed write releases the ID and the
// client's retry is not mistaken for a duplicate (the failure mode where an event is counted zero
// times).
//
// A reservation carries the token of the request that took it. The outcome of a write can arrive
// after the edge answered (a stalled broker, --ingest-produce-timeout), and by then the reservation
// may have expired and been taken by the client's retry: the late release of the first attempt must
// not free the retry's reservation, so Release removes only its own token. Confirm needs no token:
// an acknowledged write makes the ID seen whoever holds it.
type Deduper interface {
	Confirm(ctx context.Context, scope, eventID string) error
	Release(ctx context.Context, scope, eventID, token string) error
}

// reservation is what Admit found for an event ID: stateNew when the caller now owns it, stateDone
// when it was already accepted, statePending when another request holds it.
type reservation int

const (
	stateNew reservation = iota
	stateDone
	statePending
)

// RedisDeduper implements Deduper with one key per (scope, event ID).
type RedisDeduper struct {
	Client redis.UniversalClient
	Prefix string
	// TTL of a confirmed ID; storage deduplication covers anything older.
	TTL time.Duration
	// PendingTTL bounds a reservation whose holder died between reserve and confirm.
	PendingTTL time.Duration
}

var _ Deduper = (*RedisDeduper)(nil)

// A reservation's value is doneValue once confirmed, else pendingPrefix and the holder's token.
const (
	pendingPrefix = "p:"
	doneValue     = "d"
)

func (d *RedisDeduper) key(scope, eventID string) string {
	sum := sha256.Sum256([]byte(eventID))
	return d.Prefix + "dedup:" + scope + ":" + hex.EncodeToString(sum[:16])
}

// Confirm implements Deduper.
func (d *RedisDeduper) Confirm(ctx context.Context, scope, eventID string) error {
	if err := d.Client.Set(ctx, d.key(scope, eventID), doneValue, d.TTL).Err(); err != nil {
		return fmt.Errorf("dedup confirm: %w", err)
	}
	return nil
}

// ConfirmMany confirms a batch of reservations in one round trip (a pipeline of Confirm's SETs).
func (d *RedisDeduper) ConfirmMany(ctx context.Context, cs []confirmation) error {
	_, err := d.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range cs {
			p.Set(ctx, d.key(c.scope, c.eventID), doneValue, d.TTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dedup confirm: %w", err)
	}
	return nil
}

var releaseIfPending = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// Release implements Deduper; it never removes a confirmed ID or another request's reservation.
func (d *RedisDeduper) Release(ctx context.Context, scope, eventID, token string) error {
	if err := releaseIfPending.Run(ctx, d.Client, []string{d.key(scope, eventID)}, pendingPrefix+token).Err(); err != nil {
		return fmt.Errorf("dedup release: %w", err)
	}
	return nil
}
