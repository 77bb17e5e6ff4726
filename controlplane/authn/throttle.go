package authn

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/internal/redisx"
)

// ThrottledError refuses a sign-in after too many failures (429 rate_limited with Retry-After).
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return "too many failed sign-ins; try again in " + strconv.Itoa(e.Seconds()) + " seconds"
}

// Seconds is the Retry-After value: whole seconds, at least one.
func (e *ThrottledError) Seconds() int { return max(1, int(math.Ceil(e.RetryAfter.Seconds()))) }

// APIError is the refusal in the API's closed list.
func (e *ThrottledError) APIError() *apierror.Error {
	return apierror.New(apierror.RateLimited, e.Error())
}

// Throttle counts failed sign-ins per account and per client address in fixed windows in Redis,
// shared by every instance. Attempts are refused while either count is at its limit, before any
// password is hashed, so a guessing run costs the server nothing after the limit.
type Throttle struct {
	rdb    redis.UniversalClient
	prefix string
	cfg    SessionConfig
}

// NewThrottle returns the sign-in throttle.
func NewThrottle(rdb redis.UniversalClient, prefix string, cfg SessionConfig) *Throttle {
	return &Throttle{rdb: rdb, prefix: prefix, cfg: cfg}
}

func (t *Throttle) keys(account, addr string) [2]string {
	return [2]string{t.prefix + "signin-fail:account:" + hashID(account), t.prefix + "signin-fail:addr:" + addr}
}

// Check returns a *ThrottledError when the account or the address is at its limit.
func (t *Throttle) Check(ctx context.Context, account, addr string) error {
	k := t.keys(account, addr)
	limits := [2]int{t.cfg.MaxFailuresPerAccount, t.cfg.MaxFailuresPerAddress}
	var wait time.Duration
	for i, key := range k {
		n, err := t.rdb.Get(ctx, key).Int()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			return fmt.Errorf("sign-in throttle: %w", err)
		}
		if n >= limits[i] {
			ttl, err := t.rdb.PTTL(ctx, key).Result()
			if err != nil {
				return fmt.Errorf("sign-in throttle: %w", err)
			}
			wait = max(wait, ttl, time.Second)
		}
	}
	if wait > 0 {
		return &ThrottledError{RetryAfter: wait}
	}
	return nil
}

// Fail counts a failed sign-in; the window starts at the first failure.
func (t *Throttle) Fail(ctx context.Context, account, addr string) error {
	// Two counters in two slots of a Redis Cluster, where redisx.Tx counts them in turn.
	var groups []func(redis.Pipeliner)
	for _, key := range t.keys(account, addr) {
		groups = append(groups, func(p redis.Pipeliner) {
			p.Incr(ctx, key)
			p.ExpireNX(ctx, key, t.cfg.FailureWindow)
		})
	}
	return redisx.Tx(ctx, t.rdb, groups...)
}

// Succeed forgets the account's failures (not the address's: one good password must not reset a
// guessing run from the same address against other accounts).
func (t *Throttle) Succeed(ctx context.Context, account string) error {
	return t.rdb.Del(ctx, t.keys(account, "")[0]).Err()
}
