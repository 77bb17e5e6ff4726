package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// APIKeyPrefix starts every workspace key, so a leaked key is recognisable by secret scanners.
const APIKeyPrefix = "revtrack_sk_"

// HashKey is the only form in which a key is stored.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func newSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// cachedKey is what Redis holds per key hash.
type cachedKey struct {
	KeyID       string `json:"keyId"`
	WorkspaceID string `json:"workspaceId"`
	Hash        string `json:"hash"`
	Scope       string `json:"scope"`
	Revoked     bool   `json:"revoked"`
}

func (s *Store) keyCacheKey(hash string) string { return s.prefix + "apikey:" + hash }

// CreateAPIKey generates a key for a workspace. The returned plaintext is shown once; only its
// SHA-256 is stored.
func (s *Store) CreateAPIKey(ctx context.Context, actor, slug, name, scope string) (string, APIKey, error) {
	if strings.TrimSpace(name) == "" {
		return "", APIKey{}, fmt.Errorf("%w: key name is required (name each integration's key)", ErrInvalid)
	}
	if scope != ScopeRead && scope != ScopeAdmin {
		return "", APIKey{}, fmt.Errorf("%w: key scope %q: want read or admin", ErrInvalid, scope)
	}
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return "", APIKey{}, err
	}
	plain := APIKeyPrefix + newSecret()
	hash := HashKey(plain)
	k := APIKey{ID: uuid.Must(uuid.NewV7()).String(), WorkspaceID: w.ID, Name: name, Scope: scope, CreatedBy: actor,
		CreatedAt: s.now().UTC().Truncate(time.Second)}
	if err := s.insert(ctx, insertAPIKey, []any{k.ID, k.WorkspaceID, k.Name, hash, k.CreatedBy, k.CreatedAt, (*time.Time)(nil), s.version(), k.Scope}); err != nil {
		return "", APIKey{}, fmt.Errorf("write api key: %w", err)
	}
	if err := s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "api_key.create", TargetType: "api_key",
		TargetID: k.ID, Details: map[string]string{"name": name, "scope": scope}}); err != nil {
		return "", APIKey{}, err
	}
	return plain, k, nil
}

// RevokeAPIKey invalidates one key at once on every instance: the revoked state is written to
// ClickHouse, then over the shared Redis cache entry that every lookup reads.
func (s *Store) RevokeAPIKey(ctx context.Context, actor, keyID string) (APIKey, error) {
	k, hash, err := s.apiKeyByID(ctx, keyID)
	if err != nil {
		return APIKey{}, err
	}
	if k.RevokedAt == nil {
		at := s.now().UTC().Truncate(time.Second)
		k.RevokedAt = &at
		if err := s.insert(ctx, insertAPIKey, []any{k.ID, k.WorkspaceID, k.Name, hash, k.CreatedBy, k.CreatedAt, k.RevokedAt, s.version(), k.Scope}); err != nil {
			return APIKey{}, fmt.Errorf("write api key: %w", err)
		}
	}
	b, _ := json.Marshal(cachedKey{KeyID: k.ID, WorkspaceID: k.WorkspaceID, Hash: hash, Scope: k.Scope, Revoked: true})
	if err := s.rdb.Set(ctx, s.keyCacheKey(hash), b, s.CacheTTL).Err(); err != nil {
		return APIKey{}, fmt.Errorf("publish revocation: %w", err)
	}
	return k, s.Audit(ctx, AuditEntry{WorkspaceID: k.WorkspaceID, Actor: actor, Action: "api_key.revoke", TargetType: "api_key",
		TargetID: k.ID, Details: map[string]string{"name": k.Name}})
}

// APIKeys lists a workspace's keys, revoked ones included, with when each was last used.
func (s *Store) APIKeys(ctx context.Context, workspaceID string) ([]APIKey, error) {
	keys, _, err := s.queryKeys(ctx, selectAPIKeysByWorkspace, workspaceID)
	if err != nil {
		return nil, err
	}
	used, err := s.keysLastUsed(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("key last use: %w", err)
	}
	for i := range keys {
		if t, ok := used[keys[i].ID]; ok {
			keys[i].LastUsedAt = &t
		}
	}
	return keys, nil
}

func (s *Store) apiKeyByID(ctx context.Context, id string) (APIKey, string, error) {
	keys, hashes, err := s.queryKeys(ctx, selectAPIKeyByID, id)
	if err != nil {
		return APIKey{}, "", err
	}
	if len(keys) == 0 {
		return APIKey{}, "", fmt.Errorf("%w: api key %s", ErrNotFound, id)
	}
	return keys[0], hashes[0], nil
}

func (s *Store) queryKeys(ctx context.Context, q string, arg string) ([]APIKey, []string, error) {
	rows, err := s.ch.Query(ctx, q, arg)
	if err != nil {
		return nil, nil, fmt.Errorf("query api keys: %w", err)
	}
	defer rows.Close()
	var keys []APIKey
	var hashes []string
	for rows.Next() {
		var k APIKey
		var h string
		if err := rows.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.CreatedBy, &k.CreatedAt, &k.RevokedAt, &h, &k.Scope); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		hashes = append(hashes, h)
	}
	return keys, hashes, rows.Err()
}

// AuthenticateAPIKey resolves a bearer key to its workspace. It never logs or returns the key, and
// compares hashes in constant time. A Redis failure fails closed (the caller answers 503).
func (s *Store) AuthenticateAPIKey(ctx context.Context, key string) (Principal, error) {
	if !strings.HasPrefix(key, APIKeyPrefix) {
		return Principal{}, ErrInvalidKey
	}
	hash := HashKey(key)
	ck, err := s.lookupKey(ctx, hash)
	if err != nil {
		return Principal{}, err
	}
	if ck.Revoked || subtle.ConstantTimeCompare([]byte(ck.Hash), []byte(hash)) != 1 {
		return Principal{}, ErrInvalidKey
	}
	s.noteKeyUse(ctx, ck.KeyID)
	return Principal{WorkspaceID: ck.WorkspaceID, KeyID: ck.KeyID, Scope: ck.Scope}, nil
}

func (s *Store) lookupKey(ctx context.Context, hash string) (cachedKey, error) {
	var ck cachedKey
	b, err := s.rdb.Get(ctx, s.keyCacheKey(hash)).Bytes()
	if err == nil && json.Unmarshal(b, &ck) == nil {
		return ck, nil
	}
	if err != nil && err != redis.Nil {
		return ck, fmt.Errorf("key cache: %w", err)
	}
	keys, hashes, err := s.queryKeys(ctx, selectAPIKeyByHash, hash)
	if err != nil {
		return ck, err
	}
	if len(keys) == 0 {
		// Unknown keys are not cached: a flood of random keys must not fill Redis.
		return ck, ErrInvalidKey
	}
	ck = cachedKey{KeyID: keys[0].ID, WorkspaceID: keys[0].WorkspaceID, Hash: hashes[0], Scope: keys[0].Scope, Revoked: keys[0].RevokedAt != nil}
	b, _ = json.Marshal(ck)
	// NX: a revocation written meanwhile must win over this possibly older read.
	if err := s.rdb.SetNX(ctx, s.keyCacheKey(hash), b, s.CacheTTL).Err(); err != nil {
		return ck, fmt.Errorf("key cache: %w", err)
	}
	return ck, nil
}
