package controlplane

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
)

// KeyUseInterval is how often, at most, one instance records that a key was used: last-used is
// for a person deciding whether a key can be revoked, which minute precision serves, and a Redis
// write per request would double the key check's cost for nothing.
const KeyUseInterval = time.Minute

// keyUseTTL bounds how long a key's last use is kept when it is no longer used: longer than anyone
// would look back to decide that a key is idle.
const keyUseTTL = 400 * 24 * time.Hour

// keyUses remembers, per Redis record (namespace and key ID), when this process last recorded a
// use. It holds valid keys only (a use is noted after the key check passed), so its size is the
// number of keys in use.
var keyUses = struct {
	mu   sync.Mutex
	last map[string]time.Time
}{last: map[string]time.Time{}}

func (s *Store) keyUsedKey(keyID string) string { return s.prefix + "apikey_used:" + keyID }

// noteKeyUse records a key's use in Redis at most once per KeyUseInterval per instance. The record
// is best effort: a failed write never refuses the request it describes, it only leaves last-used
// older, and the next request after the interval tries again.
func (s *Store) noteKeyUse(ctx context.Context, keyID string) {
	now := s.now().UTC()
	rec := s.keyUsedKey(keyID)
	keyUses.mu.Lock()
	if prev, ok := keyUses.last[rec]; ok && now.Sub(prev) < KeyUseInterval && !now.Before(prev) {
		keyUses.mu.Unlock()
		return
	}
	keyUses.last[rec] = now
	keyUses.mu.Unlock()
	// The newest of the instances' writes wins: a plain SET could move the time back when an
	// instance's write is late, so the script keeps the larger value.
	if err := keepLatest.Run(ctx, s.rdb, []string{rec}, now.Unix(), int64(keyUseTTL/time.Second)).Err(); err != nil {
		keyUses.mu.Lock()
		delete(keyUses.last, rec) // try again on the next request
		keyUses.mu.Unlock()
	}
}

// keysLastUsed returns the recorded last use of each key (absent when never recorded).
func (s *Store) keysLastUsed(ctx context.Context, keys []APIKey) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(keys) == 0 {
		return out, nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = s.keyUsedKey(k.ID)
	}
	vals, err := redisx.MGet(ctx, s.rdb, names...) // one key per API key: several slots of a cluster
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		if sec, err := strconv.ParseInt(str, 10, 64); err == nil {
			out[keys[i].ID] = time.Unix(sec, 0).UTC()
		}
	}
	return out, nil
}

// keepLatest sets KEYS[1] to ARGV[1] (Unix seconds) unless it holds a later time, and renews its
// expiry to ARGV[2] seconds.
var keepLatest = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 1
`)
