package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Refusals the ingest edge makes for a known source are counted here, in Redis, so that the
// source's status (GET /api/v1/tracking/sources/{id}/status) can answer the troubleshooting
// conditions "origin not allowed" and "tracking source unavailable" from real data: refused events
// are never stored with the accepted ones (docs/TRACKING.md, "7. Troubleshooting").
const (
	// RefusalWindow is how long a refusal is remembered after it last happened.
	RefusalWindow = 7 * 24 * time.Hour
	// RetiredKeyWindow is how long a rotated-away public key still names its source, so that a page
	// still using it is shown on that source's status.
	RetiredKeyWindow = 30 * 24 * time.Hour
	// maxRefusalFields bounds one source's hash: a page can send any Origin, and only the first
	// distinct ones are worth showing.
	maxRefusalFields = 50
	maxOriginLen     = 200
)

// Reasons a request with a key of the source was refused.
const (
	RefusedPublicKeyRotated  = "public_key_rotated"
	RefusedPrivateKey        = "private_key_refused"
	RefusedSourceDisabled    = "source_disabled"
	refusalOriginFieldPrefix = "o:"
	refusalKeyFieldPrefix    = "k:"
)

// RefusedOrigin is an origin refused for the source's public key.
type RefusedOrigin struct {
	Origin string    `json:"origin"`
	Count  int64     `json:"count"`
	LastAt time.Time `json:"lastAt"`
}

// RefusedKey counts requests refused for one reason.
type RefusedKey struct {
	Reason string    `json:"reason"`
	Count  int64     `json:"count"`
	LastAt time.Time `json:"lastAt"`
}

// SourceRefusals is what the edge refused for a source since Since (now minus RefusalWindow).
type SourceRefusals struct {
	Since   time.Time       `json:"since"`
	Origins []RefusedOrigin `json:"origins"`
	Keys    []RefusedKey    `json:"keys"`
}

func (s *Store) refusalsKey(sourceID string) string { return s.prefix + "refusals:" + sourceID }
func (s *Store) retiredKey(pk string) string {
	h := sha256.Sum256([]byte(pk))
	return s.prefix + "refusals:retired:" + hex.EncodeToString(h[:])
}

// One field per origin or reason: "<count>|<unix seconds>", counted in one step; new fields stop at
// the bound (ARGV[3]) while known ones still count.
var recordRefusal = redis.NewScript(`
local v = redis.call("HGET", KEYS[1], ARGV[1])
local n = 0
if v then
  n = tonumber(string.match(v, "^(%d+)")) or 0
elseif redis.call("HLEN", KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call("HSET", KEYS[1], ARGV[1], tostring(n + 1) .. "|" .. ARGV[2])
redis.call("EXPIRE", KEYS[1], ARGV[4])
return n + 1`)

// RecordRefusedOrigin counts a browser request with the source's key from an origin it does not allow.
func (s *Store) RecordRefusedOrigin(ctx context.Context, sourceID, origin string) error {
	if len(origin) > maxOriginLen {
		origin = origin[:maxOriginLen]
	}
	if origin == "" {
		origin = "(no Origin header)"
	}
	return s.recordRefusal(ctx, sourceID, refusalOriginFieldPrefix+origin)
}

// RecordRefusedKey counts a request refused for one of the Refused* reasons.
func (s *Store) RecordRefusedKey(ctx context.Context, sourceID, reason string) error {
	return s.recordRefusal(ctx, sourceID, refusalKeyFieldPrefix+reason)
}

func (s *Store) recordRefusal(ctx context.Context, sourceID, field string) error {
	err := recordRefusal.Run(ctx, s.rdb, []string{s.refusalsKey(sourceID)}, field, s.now().Unix(), maxRefusalFields,
		int64(RefusalWindow/time.Second)).Err()
	if err != nil {
		return fmt.Errorf("record refusal: %w", err)
	}
	return nil
}

// RetirePublicKey remembers, for RetiredKeyWindow, which source a rotated-away public key named.
func (s *Store) RetirePublicKey(ctx context.Context, oldPK, sourceID string) error {
	if err := s.rdb.Set(ctx, s.retiredKey(oldPK), sourceID, RetiredKeyWindow).Err(); err != nil {
		return fmt.Errorf("retire public key: %w", err)
	}
	return nil
}

// RetiredPublicKeySource is the source a rotated-away public key named ("" when none).
func (s *Store) RetiredPublicKeySource(ctx context.Context, pk string) (string, error) {
	if !strings.HasPrefix(pk, PublicKeyPrefix) {
		return "", nil
	}
	id, err := s.rdb.Get(ctx, s.retiredKey(pk)).Result()
	if err == redis.Nil {
		return "", nil
	}
	return id, err
}

// SourceRefusals reads what was refused for the source within RefusalWindow, newest first.
func (s *Store) SourceRefusals(ctx context.Context, sourceID string) (SourceRefusals, error) {
	since := s.now().Add(-RefusalWindow).UTC().Truncate(time.Second)
	out := SourceRefusals{Since: since, Origins: []RefusedOrigin{}, Keys: []RefusedKey{}}
	fields, err := s.rdb.HGetAll(ctx, s.refusalsKey(sourceID)).Result()
	if err != nil {
		return out, fmt.Errorf("read refusals: %w", err)
	}
	for f, v := range fields {
		n, at, ok := parseRefusal(v)
		if !ok || at.Before(since) {
			continue
		}
		switch {
		case strings.HasPrefix(f, refusalOriginFieldPrefix):
			out.Origins = append(out.Origins, RefusedOrigin{Origin: f[len(refusalOriginFieldPrefix):], Count: n, LastAt: at})
		case strings.HasPrefix(f, refusalKeyFieldPrefix):
			out.Keys = append(out.Keys, RefusedKey{Reason: f[len(refusalKeyFieldPrefix):], Count: n, LastAt: at})
		}
	}
	sort.Slice(out.Origins, func(i, j int) bool {
		return out.Origins[i].LastAt.After(out.Origins[j].LastAt) ||
			out.Origins[i].LastAt.Equal(out.Origins[j].LastAt) && out.Origins[i].Origin < out.Origins[j].Origin
	})
	sort.Slice(out.Keys, func(i, j int) bool {
		return out.Keys[i].LastAt.After(out.Keys[j].LastAt) || out.Keys[i].LastAt.Equal(out.Keys[j].LastAt) && out.Keys[i].Reason < out.Keys[j].Reason
	})
	return out, nil
}

func parseRefusal(v string) (int64, time.Time, bool) {
	c, t, ok := strings.Cut(v, "|")
	n, err1 := strconv.ParseInt(c, 10, 64)
	sec, err2 := strconv.ParseInt(t, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, time.Time{}, false
	}
	return n, time.Unix(sec, 0).UTC(), true
}
