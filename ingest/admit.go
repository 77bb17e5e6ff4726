package ingest

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Admitter applies a request's rate limit and reserves its event ID in one step, so an accepted
// server event costs one Redis round trip here instead of two (docs/BENCHMARKS.md).
// A new reservation is held under token (unique per request; see Deduper). limitKey and scope carry
// the same hash tag (edgeRef: the workspace ID), so the script's two keys share a Redis Cluster slot.
type Admitter interface {
	Admit(ctx context.Context, limitKey string, l Limit, scope, eventID, token string) (allowed bool, state reservation, err error)
}

// RedisAdmitter runs the fixed-window counter of RedisLimiter and the reservation of RedisDeduper
// as one script over their own keys, so the three stay interchangeable: a request admitted here is
// counted in the same window Allow reads, and its reservation is confirmed or released by the
// Deduper as usual. Both keys live on one Redis (as the whole edge assumes).
type RedisAdmitter struct {
	Limiter *RedisLimiter
	Deduper *RedisDeduper
}

var _ Admitter = (*RedisAdmitter)(nil)

var admitScript = redis.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
if n > tonumber(ARGV[2]) then
  return {0, ""}
end
if redis.call("SET", KEYS[2], ARGV[4], "NX", "PX", ARGV[3]) then
  return {1, "new"}
end
local v = redis.call("GET", KEYS[2])
if not v then
  redis.call("SET", KEYS[2], ARGV[4], "PX", ARGV[3])
  return {1, "new"}
end
return {1, v}`)

// Admit implements Admitter.
func (a *RedisAdmitter) Admit(ctx context.Context, limitKey string, l Limit, scope, eventID, token string) (bool, reservation, error) {
	res, err := admitScript.Run(ctx, a.Deduper.Client,
		[]string{a.Limiter.windowKey(limitKey, l), a.Deduper.key(scope, eventID)},
		l.Window.Milliseconds(), l.N, a.Deduper.PendingTTL.Milliseconds(), pendingPrefix+token).Slice()
	if err != nil {
		return false, 0, fmt.Errorf("admit: %w", err)
	}
	if allowed, _ := res[0].(int64); allowed == 0 {
		return false, 0, nil
	}
	switch v, _ := res[1].(string); v {
	case "new":
		return true, stateNew, nil
	case doneValue:
		return true, stateDone, nil
	default:
		return true, statePending, nil
	}
}
