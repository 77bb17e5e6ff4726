package budget

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bucket is a token bucket: it holds at most Size tokens and gains PerSecond of them continuously.
type Bucket struct {
	Size      float64
	PerSecond float64
}

// Decision is the answer to one Take.
type Decision struct {
	OK bool
	// RetryAfter is, when refused, how long until the bucket holds the requested cost.
	RetryAfter time.Duration
}

// Buckets takes tokens from named buckets. A negative cost gives tokens back (never beyond Size).
// The policy (which bucket, what cost) is the Budget's; the enforcer only applies it atomically.
type Buckets interface {
	Take(ctx context.Context, key string, b Bucket, cost float64) (Decision, error)
}

// RedisBuckets keeps the buckets in Redis, shared by every query instance: one script refills and
// takes atomically, on Redis's clock, so instances with skewed clocks still agree.
type RedisBuckets struct {
	Client redis.UniversalClient
	Prefix string
}

var _ Buckets = (*RedisBuckets)(nil)

// takeScript: KEYS[1] is a hash {tokens, at (ms)}; ARGV size, tokens per second, cost. A missing
// bucket is full. Refused takes leave the tokens unchanged (but refilled). The hash expires once it
// would be full again, so idle keys cost nothing.
var takeScript = redis.NewScript(`
local size = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call("HMGET", KEYS[1], "tokens", "at")
local tokens = tonumber(b[1]) or size
local at = tonumber(b[2]) or now
if now > at then
  tokens = math.min(size, tokens + (now - at) * rate / 1000)
end
local ok = 0
local wait = 0
if cost <= tokens then
  tokens = math.min(size, tokens - cost)
  ok = 1
else
  wait = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "at", now)
redis.call("PEXPIRE", KEYS[1], math.ceil((size - tokens) * 1000 / rate) + 1000)
return {ok, wait}`)

// Take implements Buckets.
func (r *RedisBuckets) Take(ctx context.Context, key string, b Bucket, cost float64) (Decision, error) {
	res, err := takeScript.Run(ctx, r.Client, []string{r.Prefix + "qbudget:" + key},
		strconv.FormatFloat(b.Size, 'f', -1, 64), strconv.FormatFloat(b.PerSecond, 'f', -1, 64),
		strconv.FormatFloat(cost, 'f', -1, 64)).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("query budget: %w", err)
	}
	if len(res) != 2 {
		return Decision{}, fmt.Errorf("query budget: script answered %v", res)
	}
	return Decision{OK: res[0] == 1, RetryAfter: time.Duration(res[1]) * time.Millisecond}, nil
}

// seconds rounds a wait up to whole seconds, at least one: what Retry-After carries.
func seconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
