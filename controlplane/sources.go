package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
)

// Key prefixes of tracking sources (docs/TRACKING.md, "1. Create a tracking source").
const (
	PublicKeyPrefix  = "tracker_pk_"
	PrivateKeyPrefix = "tracker_sk_"
)

// Source is a tracking source: one selected app, its exact allowed origins, its browser-safe public
// key. The private key is held only as its SHA-256.
type Source struct {
	ID             string    `json:"id"`
	WorkspaceID    string    `json:"workspaceId"`
	AppID          string    `json:"appId"`
	Name           string    `json:"name"`
	AllowedOrigins []string  `json:"allowedOrigins"`
	Enabled        bool      `json:"enabled"`
	PublicKey      string    `json:"publicKey"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`

	privateKeyHash string
}

// AllowsOrigin reports whether origin (as a browser sends it) is one of the exact allowed origins.
func (s Source) AllowsOrigin(origin string) bool {
	n, err := NormalizeOrigin(origin)
	return err == nil && n == origin && slices.Contains(s.AllowedOrigins, n)
}

// cachedSource is the Redis form of a source, including the private-key hash the edge compares.
// Gone marks a key that no longer resolves (rotated away), so instances that cached it stop at once.
type cachedSource struct {
	Source
	PrivateKeyHash string `json:"privateKeyHash"`
	Gone           bool   `json:"gone,omitempty"`
}

func randomKey(prefix string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

func (s *Store) pkCacheKey(pk string) string     { return s.prefix + "src:pk:" + pk }
func (s *Store) skCacheKey(skHash string) string { return s.prefix + "src:sk:" + skHash }
func (s *Store) auditSource(ctx context.Context, actor, action string, src Source, details map[string]string) error {
	return s.Audit(ctx, AuditEntry{WorkspaceID: src.WorkspaceID, Actor: actor, Action: action, TargetType: "tracking_source",
		TargetID: src.ID, Details: details})
}

// CreateSource adds a tracking source for one of the workspace's selected apps and returns it with
// its private key, which is shown once.
func (s *Store) CreateSource(ctx context.Context, actor, slug, appID, name string, origins []string) (Source, string, error) {
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return Source{}, "", err
	}
	if !slices.Contains(w.SelectedAppIDs, appID) {
		return Source{}, "", fmt.Errorf("%w: app %q is not one of the workspace's selected apps", ErrInvalid, appID)
	}
	if strings.TrimSpace(name) == "" {
		name = appID
	}
	norm, err := normalizeOrigins(origins)
	if err != nil {
		return Source{}, "", err
	}
	now := s.now().UTC().Truncate(time.Second)
	private := randomKey(PrivateKeyPrefix, 32)
	src := Source{ID: uuid.Must(uuid.NewV7()).String(), WorkspaceID: w.ID, AppID: appID, Name: name, AllowedOrigins: norm,
		Enabled: true, PublicKey: randomKey(PublicKeyPrefix, 16), CreatedAt: now, UpdatedAt: now, privateKeyHash: HashKey(private)}
	if err := s.putSource(ctx, src, ""); err != nil {
		return Source{}, "", err
	}
	return src, private, s.auditSource(ctx, actor, "tracking_source.create", src,
		map[string]string{"appId": appID, "name": name, "allowedOrigins": strings.Join(norm, " "), "publicKey": src.PublicKey})
}

// putSource writes a new version of a source whose private key is unchanged.
func (s *Store) putSource(ctx context.Context, src Source, oldPK string) error {
	return s.writeSource(ctx, src, oldPK, "")
}

// writeSource writes a new version and publishes it to the cache under its public key and
// private-key hash, overwriting whatever any instance cached. oldPK and oldSKHash, when set, are
// keys that must stop resolving now (rotation): their cache entries become tombstones.
func (s *Store) writeSource(ctx context.Context, src Source, oldPK, oldSKHash string) error {
	src.UpdatedAt = s.now().UTC().Truncate(time.Second)
	err := s.insert(ctx, insertSource, []any{src.ID, src.WorkspaceID, src.AppID, src.Name, src.AllowedOrigins, boolByte(src.Enabled),
		src.PublicKey, src.privateKeyHash, src.CreatedAt, src.UpdatedAt, s.version()})
	if err != nil {
		return fmt.Errorf("write tracking source: %w", err)
	}
	live, _ := json.Marshal(cachedSource{Source: src, PrivateKeyHash: src.privateKeyHash})
	gone, _ := json.Marshal(cachedSource{Gone: true})
	// One MULTI on a single Redis. The entries are found from unrelated keys (each public key and
	// private-key hash), so on a Redis Cluster they are in several slots and redisx.Tx writes them
	// one after another, in an order that is safe to read between: first the edge's flat copy
	// (sources_edge.go), which the edge checks first and which already names the new keys, then the
	// tombstones, so a rotated-away key stops resolving before the new one is published (until then
	// the new one misses the cache and is read from ClickHouse, which has it).
	err = redisx.Tx(ctx, s.rdb,
		func(p redis.Pipeliner) { s.publishEdgeSource(ctx, p, src) },
		func(p redis.Pipeliner) {
			if oldPK != "" && oldPK != src.PublicKey {
				p.Set(ctx, s.pkCacheKey(oldPK), gone, s.CacheTTL)
			}
		},
		func(p redis.Pipeliner) {
			if oldSKHash != "" && oldSKHash != src.privateKeyHash {
				p.Set(ctx, s.skCacheKey(oldSKHash), gone, s.CacheTTL)
			}
		},
		func(p redis.Pipeliner) { p.Set(ctx, s.pkCacheKey(src.PublicKey), live, s.CacheTTL) },
		func(p redis.Pipeliner) { p.Set(ctx, s.skCacheKey(src.privateKeyHash), live, s.CacheTTL) },
	)
	if err != nil {
		return fmt.Errorf("publish tracking source: %w", err)
	}
	return nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Sources lists a workspace's tracking sources.
func (s *Store) Sources(ctx context.Context, workspaceID string) ([]Source, error) {
	return s.querySources(ctx, selectSourcesByWorkspace, workspaceID)
}

// SourceByID returns one source of the workspace.
func (s *Store) SourceByID(ctx context.Context, workspaceID, id string) (Source, error) {
	srcs, err := s.querySources(ctx, selectSourceByID, id)
	if err != nil {
		return Source{}, err
	}
	if len(srcs) == 0 || srcs[0].WorkspaceID != workspaceID {
		return Source{}, fmt.Errorf("%w: tracking source %s", ErrNotFound, id)
	}
	return srcs[0], nil
}

func (s *Store) querySources(ctx context.Context, q string, args ...any) ([]Source, error) {
	rows, err := s.ch.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query tracking sources: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var src Source
		var enabled uint8
		if err := rows.Scan(&src.ID, &src.WorkspaceID, &src.AppID, &src.Name, &src.AllowedOrigins, &enabled, &src.PublicKey,
			&src.privateKeyHash, &src.CreatedAt, &src.UpdatedAt); err != nil {
			return nil, err
		}
		src.Enabled = enabled == 1
		out = append(out, src)
	}
	return out, rows.Err()
}

// SetSourceEnabled enables or disables a source; a disabled source accepts no new events.
func (s *Store) SetSourceEnabled(ctx context.Context, actor, workspaceID, id string, enabled bool) (Source, error) {
	src, err := s.SourceByID(ctx, workspaceID, id)
	if err != nil {
		return Source{}, err
	}
	src.Enabled = enabled
	if err := s.putSource(ctx, src, ""); err != nil {
		return Source{}, err
	}
	action := "tracking_source.disable"
	if enabled {
		action = "tracking_source.enable"
	}
	return src, s.auditSource(ctx, actor, action, src, nil)
}

// SetSourceOrigins replaces the exact allowed origins.
func (s *Store) SetSourceOrigins(ctx context.Context, actor, workspaceID, id string, origins []string) (Source, error) {
	norm, err := normalizeOrigins(origins)
	if err != nil {
		return Source{}, err
	}
	src, err := s.SourceByID(ctx, workspaceID, id)
	if err != nil {
		return Source{}, err
	}
	src.AllowedOrigins = norm
	if err := s.putSource(ctx, src, ""); err != nil {
		return Source{}, err
	}
	return src, s.auditSource(ctx, actor, "tracking_source.origins", src, map[string]string{"allowedOrigins": strings.Join(norm, " ")})
}

// RotatePublicKey gives the source a new public key; the previous one stops resolving at once on
// every instance.
func (s *Store) RotatePublicKey(ctx context.Context, actor, workspaceID, id string) (Source, error) {
	src, err := s.SourceByID(ctx, workspaceID, id)
	if err != nil {
		return Source{}, err
	}
	old := src.PublicKey
	src.PublicKey = randomKey(PublicKeyPrefix, 16)
	if err := s.putSource(ctx, src, old); err != nil {
		return Source{}, err
	}
	return src, s.auditSource(ctx, actor, "tracking_source.rotate_public_key", src, map[string]string{"publicKey": src.PublicKey})
}

// RotatePrivateKey gives the source a new private key (returned once); the previous one stops
// working at once on every instance.
func (s *Store) RotatePrivateKey(ctx context.Context, actor, workspaceID, id string) (Source, string, error) {
	src, err := s.SourceByID(ctx, workspaceID, id)
	if err != nil {
		return Source{}, "", err
	}
	old := src.privateKeyHash
	private := randomKey(PrivateKeyPrefix, 32)
	src.privateKeyHash = HashKey(private)
	if err := s.writeSource(ctx, src, "", old); err != nil {
		return Source{}, "", err
	}
	return src, private, s.auditSource(ctx, actor, "tracking_source.rotate_private_key", src, nil)
}

// SourceByPublicKey resolves a browser's public key. It returns ErrSourceUnavailable for an unknown
// or rotated key; the caller checks Enabled itself, so it can name the condition.
func (s *Store) SourceByPublicKey(ctx context.Context, pk string) (Source, error) {
	if !strings.HasPrefix(pk, PublicKeyPrefix) {
		return Source{}, ErrSourceUnavailable
	}
	cs, err := s.cachedSourceLookup(ctx, s.pkCacheKey(pk), selectSourceByPublicKey, pk)
	if err != nil {
		return Source{}, err
	}
	return cs.Source, nil
}

// resolveScript reads a cached source and, in the same round trip, its cached workspace
// (wsCacheKey: ARGV[1] .. workspace ID .. ARGV[2]): the edge needs both on every request. The
// workspace's key is not in KEYS, which a single Redis allows but a Redis Cluster does not (the key
// is in another slot, found only from the source), so on a cluster resolve reads the two in turn.
var resolveScript = redis.NewScript(`
local src = redis.call("GET", KEYS[1])
if not src then return {false, false} end
local ok, obj = pcall(cjson.decode, src)
if not ok or type(obj) ~= "table" or obj.gone or type(obj.workspaceId) ~= "string" then return {src, false} end
return {src, redis.call("GET", ARGV[1] .. obj.workspaceId .. ARGV[2])}`)

// resolveCached reads what resolveScript reads: the cached source (or nil) and, when the source is
// cached and live, its cached workspace (or nil).
func (s *Store) resolveCached(ctx context.Context, pk string) ([]any, error) {
	if !redisx.Sharded(s.rdb) {
		return resolveScript.Run(ctx, s.rdb, []string{s.pkCacheKey(pk)}, s.prefix+"ws:{", "}").Slice()
	}
	src, err := s.rdb.Get(ctx, s.pkCacheKey(pk)).Result()
	if errors.Is(err, redis.Nil) {
		return []any{nil, nil}, nil
	}
	if err != nil {
		return nil, err
	}
	// The workspace is read by resolve below (Store.Workspace) when it is not returned here.
	return []any{src, nil}, nil
}

// SourceWithWorkspace resolves a public key to its source and the source's workspace, from the cache
// in one round trip when both are there. Errors as SourceByPublicKey.
func (s *Store) SourceWithWorkspace(ctx context.Context, pk string) (Source, Workspace, error) {
	if !strings.HasPrefix(pk, PublicKeyPrefix) {
		return Source{}, Workspace{}, ErrSourceUnavailable
	}
	cs, w, err := s.resolve(ctx, pk)
	return cs.Source, w, err
}

func (s *Store) resolve(ctx context.Context, pk string) (cachedSource, Workspace, error) {
	res, err := s.resolveCached(ctx, pk)
	if err != nil {
		return cachedSource{}, Workspace{}, fmt.Errorf("source cache: %w", err)
	}
	var cs cachedSource
	srcJSON, _ := res[0].(string)
	if srcJSON == "" || json.Unmarshal([]byte(srcJSON), &cs) != nil {
		if cs, err = s.cachedSourceLookup(ctx, s.pkCacheKey(pk), selectSourceByPublicKey, pk); err != nil {
			return cachedSource{}, Workspace{}, err
		}
	} else if cs.Gone {
		return cachedSource{}, Workspace{}, ErrSourceUnavailable
	}
	cs.Source.privateKeyHash = cs.PrivateKeyHash
	var w Workspace
	if wsJSON, _ := res[1].(string); wsJSON != "" && json.Unmarshal([]byte(wsJSON), &w) == nil && w.ID == cs.WorkspaceID {
		return cs, w, nil
	}
	w, err = s.Workspace(ctx, cs.WorkspaceID)
	return cs, w, err
}

// AuthenticateServerKey checks a server event's credentials: the bearer key (the source's private
// key, or an active API key of the source's workspace), the public key and the team slug must all
// belong to one source. Key hashes are compared in constant time. The returned source may be disabled; the caller decides what that means.
func (s *Store) AuthenticateServerKey(ctx context.Context, private, pk, teamSlug string) (Source, Workspace, error) {
	workspaceKey := strings.HasPrefix(private, APIKeyPrefix)
	if !strings.HasPrefix(private, PrivateKeyPrefix) && !workspaceKey {
		return Source{}, Workspace{}, ErrInvalidKey
	}
	if !strings.HasPrefix(pk, PublicKeyPrefix) {
		return Source{}, Workspace{}, ErrSourceUnavailable
	}
	cs, w, err := s.resolve(ctx, pk)
	if err != nil {
		return Source{}, Workspace{}, err
	}
	if workspaceKey {
		// A workspace API key authorizes ingestion too (docs/TRACKING.md, section 4); it must belong to
		// the workspace that owns the source.
		p, err := s.AuthenticateAPIKey(ctx, private)
		if err != nil {
			return Source{}, Workspace{}, err
		}
		if p.WorkspaceID != w.ID {
			return Source{}, Workspace{}, ErrInvalidKey
		}
	} else if subtle.ConstantTimeCompare([]byte(cs.PrivateKeyHash), []byte(HashKey(private))) != 1 {
		return Source{}, Workspace{}, ErrInvalidKey
	}
	if w.Slug != teamSlug {
		return Source{}, Workspace{}, ErrInvalidKey
	}
	return cs.Source, w, nil
}

// AuthenticatePrivateKey resolves a tracking private key used as a bearer key for reading (it reads
// MCP data: docs/API.md, "Keys"). A rotated-away key and the key of a disabled source are
// ErrInvalidKey: a source that may not send events may not read either. Both are seen at once on
// every instance, because rotation and disabling overwrite the cached entry this reads.
func (s *Store) AuthenticatePrivateKey(ctx context.Context, private string) (Principal, error) {
	if !strings.HasPrefix(private, PrivateKeyPrefix) {
		return Principal{}, ErrInvalidKey
	}
	h := HashKey(private)
	cs, err := s.cachedSourceLookup(ctx, s.skCacheKey(h), selectSourceByPrivateKey, h)
	if err != nil {
		if err == ErrSourceUnavailable {
			return Principal{}, ErrInvalidKey
		}
		return Principal{}, err
	}
	if subtle.ConstantTimeCompare([]byte(cs.PrivateKeyHash), []byte(h)) != 1 || !cs.Enabled {
		return Principal{}, ErrInvalidKey
	}
	return Principal{WorkspaceID: cs.WorkspaceID, KeyID: "source:" + cs.ID, Scope: ScopeRead, SourceID: cs.ID}, nil
}

func (s *Store) cachedSourceLookup(ctx context.Context, cacheKey, q, arg string) (cachedSource, error) {
	var cs cachedSource
	b, err := s.rdb.Get(ctx, cacheKey).Bytes()
	if err == nil && json.Unmarshal(b, &cs) == nil {
		if cs.Gone {
			return cachedSource{}, ErrSourceUnavailable
		}
		cs.Source.privateKeyHash = cs.PrivateKeyHash
		return cs, nil
	}
	if err != nil && err != redis.Nil {
		return cs, fmt.Errorf("source cache: %w", err)
	}
	srcs, err := s.querySources(ctx, q, arg, arg)
	if err != nil {
		return cs, err
	}
	if len(srcs) == 0 {
		return cs, ErrSourceUnavailable
	}
	cs = cachedSource{Source: srcs[0], PrivateKeyHash: srcs[0].privateKeyHash}
	b, _ = json.Marshal(cs)
	// NX: a rotation or disable published meanwhile wins over this possibly older read.
	if err := s.rdb.SetNX(ctx, cacheKey, b, s.CacheTTL).Err(); err != nil {
		return cs, fmt.Errorf("source cache: %w", err)
	}
	return cs, nil
}
