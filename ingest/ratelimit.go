package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limit is a number of requests allowed per window.
type Limit struct {
	N      int
	Window time.Duration
}

// LimitPolicy says the limit for a kind of caller; the enforcer applies it. Kept apart so limits can
// later come from per-workspace plans without touching the Redis code.
type LimitPolicy interface {
	LimitFor(kind string) Limit
}

// Limiter answers whether one more request for key fits its limit.
type Limiter interface {
	Allow(ctx context.Context, key string, l Limit) (bool, error)
}

// staticPolicy is the configured limits.
type staticPolicy struct{ server, browser Limit }

func (p staticPolicy) LimitFor(kind string) Limit {
	if kind == kindServer {
		return p.server
	}
	return p.browser
}

// RedisLimiter is a fixed-window counter: one atomic script increments the window's counter and sets
// its expiry on the first hit, so concurrent instances share one count without a race.
type RedisLimiter struct {
	Client redis.UniversalClient
	Prefix string
}

var _ Limiter = (*RedisLimiter)(nil)

var fixedWindow = redis.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
return n`)

// windowKey names the counter of the current window for key.
func (r *RedisLimiter) windowKey(key string, l Limit) string {
	return fmt.Sprintf("%srl:%s:%d", r.Prefix, key, time.Now().UnixMilli()/l.Window.Milliseconds())
}

// Allow implements Limiter.
func (r *RedisLimiter) Allow(ctx context.Context, key string, l Limit) (bool, error) {
	n, err := fixedWindow.Run(ctx, r.Client, []string{r.windowKey(key, l)}, l.Window.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("rate limit: %w", err)
	}
	return n <= int64(l.N), nil
}
