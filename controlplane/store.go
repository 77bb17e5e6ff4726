package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Store is the control plane's only way to ClickHouse and its Redis cache.
type Store struct {
	ch     driver.Conn
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
	// CacheTTL bounds how long a cached key lookup lives; writes update the cache directly, so the TTL
	// only limits memory, not correctness.
	CacheTTL time.Duration
	// EraseTimeout bounds how long erasing a stored secret waits for ClickHouse to delete every
	// copy (secrets.go); 0 means DefaultEraseTimeout.
	EraseTimeout time.Duration

	mu      sync.Mutex
	lastVer uint64
}

// NewStore returns a store; prefix namespaces its Redis keys.
func NewStore(ch driver.Conn, rdb redis.UniversalClient, prefix string) *Store {
	return &Store{ch: ch, rdb: rdb, prefix: prefix, now: time.Now, CacheTTL: 10 * time.Minute}
}

// Conn is the ClickHouse connection, for read-side stores that the admin command line builds on the
// same connection.
func (s *Store) Conn() driver.Conn { return s.ch }

// version returns a strictly increasing version within this process, based on wall-clock
// microseconds so that versions written by different instances order by time.
func (s *Store) version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := uint64(s.now().UnixMicro())
	if v <= s.lastVer {
		v = s.lastVer + 1
	}
	s.lastVer = v
	return v
}

func (s *Store) insert(ctx context.Context, query string, rows ...[]any) error {
	b, err := s.ch.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	for _, r := range rows {
		if err := b.Append(r...); err != nil {
			_ = b.Abort()
			return fmt.Errorf("append: %w", err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

// CreateWorkspace adds a workspace with a unique slug.
func (s *Store) CreateWorkspace(ctx context.Context, actor, slug, name, status string) (Workspace, error) {
	if !slugRe.MatchString(slug) {
		return Workspace{}, fmt.Errorf("%w: slug %q: use 2-63 lowercase letters, digits and hyphens", ErrInvalid, slug)
	}
	if err := validStatus(status); err != nil {
		return Workspace{}, err
	}
	if _, err := s.WorkspaceBySlug(ctx, slug); err == nil {
		return Workspace{}, fmt.Errorf("%w: workspace %q already exists", ErrConflict, slug)
	}
	now := s.now().UTC().Truncate(time.Second)
	w := Workspace{ID: uuid.Must(uuid.NewV7()).String(), Slug: slug, Name: name, SubscriptionStatus: status,
		SelectedAppIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := s.putWorkspace(ctx, w); err != nil {
		return Workspace{}, err
	}
	return w, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "workspace.create", TargetType: "workspace",
		TargetID: w.ID, Details: map[string]string{"slug": slug, "subscriptionStatus": status}})
}

func validStatus(st string) error {
	if !slices.Contains([]string{StatusActive, StatusTrialing, StatusPastDue, StatusCanceled, StatusInactive}, st) {
		return fmt.Errorf("%w: subscription status %q", ErrInvalid, st)
	}
	return nil
}

func (s *Store) putWorkspace(ctx context.Context, w Workspace) error {
	w.UpdatedAt = s.now().UTC().Truncate(time.Second)
	err := s.insert(ctx, insertWorkspace, []any{w.ID, w.Slug, w.Name, w.SubscriptionStatus, w.SelectedAppIDs,
		w.CreatedAt, w.UpdatedAt, s.version(), uint8(0)})
	if err != nil {
		return fmt.Errorf("write workspace %s: %w", w.Slug, err)
	}
	// Write-through with a plain SET: it overwrites whatever a concurrent reader cached, and a reader
	// that read ClickHouse before this write can only SETNX, which now fails. Deleting instead would
	// let such a reader put the old record back until the TTL ends.
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	// The edge's flat copy goes in the same MULTI (sources_edge.go); both keys carry the workspace ID
	// as hash tag, so the MULTI stays in one slot of a Redis Cluster.
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, s.wsCacheKey(w.ID), b, s.CacheTTL)
		s.publishEdgeWorkspace(ctx, pipe, w)
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish workspace %s: %w", w.Slug, err)
	}
	return nil
}

// wsCacheKey is the Redis key of a workspace's cached record. Its hash tag (the workspace ID) is
// the one of the workspace's edge record, which every write replaces in the same MULTI. Until
// Redis Cluster support the key had no tag ("ws:<id>"); deploy/README.md says what that means for
// a rolling upgrade.
func (s *Store) wsCacheKey(id string) string { return s.prefix + "ws:{" + id + "}" }

// Workspaces lists every workspace.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	return s.queryWorkspaces(ctx, selectWorkspaces)
}

func (s *Store) queryWorkspaces(ctx context.Context, q string, args ...any) ([]Workspace, error) {
	rows, err := s.ch.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query workspaces: %w", err)
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		var w Workspace
		var del uint8
		if err := rows.Scan(&w.ID, &w.Slug, &w.Name, &w.SubscriptionStatus, &w.SelectedAppIDs, &w.CreatedAt, &w.UpdatedAt, &w.version, &del); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WorkspaceBySlug finds a workspace by its slug.
func (s *Store) WorkspaceBySlug(ctx context.Context, slug string) (Workspace, error) {
	ws, err := s.queryWorkspaces(ctx, selectWorkspaceBySlug, slug)
	if err != nil {
		return Workspace{}, err
	}
	if len(ws) == 0 {
		return Workspace{}, fmt.Errorf("%w: workspace %q", ErrNotFound, slug)
	}
	return ws[0], nil
}

// Workspace returns a workspace by ID, from the Redis cache when possible.
func (s *Store) Workspace(ctx context.Context, id string) (Workspace, error) {
	key := s.wsCacheKey(id)
	if b, err := s.rdb.Get(ctx, key).Bytes(); err == nil {
		var w Workspace
		if json.Unmarshal(b, &w) == nil {
			return w, nil
		}
	} else if err != redis.Nil {
		return Workspace{}, fmt.Errorf("workspace cache: %w", err)
	}
	ws, err := s.queryWorkspaces(ctx, selectWorkspaceByID, id)
	if err != nil {
		return Workspace{}, err
	}
	if len(ws) == 0 {
		return Workspace{}, fmt.Errorf("%w: workspace %s", ErrNotFound, id)
	}
	b, _ := json.Marshal(ws[0])
	// NX: a concurrent write's invalidation must not be overwritten by this possibly older read.
	if err := s.rdb.SetNX(ctx, key, b, s.CacheTTL).Err(); err != nil {
		return Workspace{}, fmt.Errorf("workspace cache: %w", err)
	}
	return ws[0], nil
}

// SetSelectedApps replaces the apps a workspace reports on.
func (s *Store) SetSelectedApps(ctx context.Context, actor, slug string, appIDs []string) (Workspace, error) {
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return Workspace{}, err
	}
	known, err := s.Apps(ctx)
	if err != nil {
		return Workspace{}, err
	}
	for _, id := range appIDs {
		if !slices.ContainsFunc(known, func(a App) bool { return a.ID == id }) {
			return Workspace{}, fmt.Errorf("%w: app %q", ErrNotFound, id)
		}
	}
	w.SelectedAppIDs = slices.Compact(slices.Sorted(slices.Values(appIDs)))
	if err := s.putWorkspace(ctx, w); err != nil {
		return Workspace{}, err
	}
	return w, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "workspace.select_apps", TargetType: "workspace",
		TargetID: w.ID, Details: map[string]string{"appIds": fmt.Sprint(w.SelectedAppIDs)}})
}

// SetSubscriptionStatus changes whether the workspace may be accessed.
func (s *Store) SetSubscriptionStatus(ctx context.Context, actor, slug, status string) (Workspace, error) {
	if err := validStatus(status); err != nil {
		return Workspace{}, err
	}
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return Workspace{}, err
	}
	w.SubscriptionStatus = status
	if err := s.putWorkspace(ctx, w); err != nil {
		return Workspace{}, err
	}
	return w, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "workspace.subscription_status", TargetType: "workspace",
		TargetID: w.ID, Details: map[string]string{"subscriptionStatus": status}})
}

// PutMember adds a member or changes their role.
func (s *Store) PutMember(ctx context.Context, actor, slug, email, role string) (Member, error) {
	if !slices.Contains([]string{RoleOwner, RoleAdmin, RoleMember}, role) {
		return Member{}, fmt.Errorf("%w: role %q: want owner, admin or member", ErrInvalid, role)
	}
	if email == "" {
		return Member{}, fmt.Errorf("%w: email is required", ErrInvalid)
	}
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return Member{}, err
	}
	m := Member{WorkspaceID: w.ID, UserID: uuid.NewSHA1(uuid.NameSpaceURL, []byte("mailto:"+email)).String(), Email: email, Role: role}
	now := s.now().UTC().Truncate(time.Second)
	if err := s.insert(ctx, insertMember, []any{m.WorkspaceID, m.UserID, m.Email, m.Role, now, now, s.version(), uint8(0)}); err != nil {
		return Member{}, fmt.Errorf("write member: %w", err)
	}
	// Console sessions read memberships from the cache: the new role applies at once (users_cache.go).
	if err := s.publishMemberships(ctx, m.UserID); err != nil {
		return Member{}, err
	}
	return m, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "member.put", TargetType: "member",
		TargetID: m.UserID, Details: map[string]string{"email": email, "role": role}})
}

// Members lists a workspace's members.
func (s *Store) Members(ctx context.Context, workspaceID string) ([]Member, error) {
	rows, err := s.ch.Query(ctx, selectMembers, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("query members: %w", err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		m := Member{WorkspaceID: workspaceID}
		var del uint8
		if err := rows.Scan(&m.UserID, &m.Email, &m.Role, &del); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// PutApp registers or renames an app.
func (s *Store) PutApp(ctx context.Context, actor string, a App) error {
	if a.ID == "" || a.Name == "" {
		return fmt.Errorf("%w: app id and name are required", ErrInvalid)
	}
	now := s.now().UTC().Truncate(time.Second)
	if err := s.insert(ctx, insertApp, []any{a.ID, a.PlatformAppID, a.Name, now, now, s.version(), uint8(0)}); err != nil {
		return fmt.Errorf("write app: %w", err)
	}
	return s.Audit(ctx, AuditEntry{Actor: actor, Action: "app.put", TargetType: "app", TargetID: a.ID,
		Details: map[string]string{"name": a.Name, "platformAppId": a.PlatformAppID}})
}

// Apps lists every app.
func (s *Store) Apps(ctx context.Context) ([]App, error) {
	rows, err := s.ch.Query(ctx, selectApps)
	if err != nil {
		return nil, fmt.Errorf("query apps: %w", err)
	}
	defer rows.Close()
	var out []App
	for rows.Next() {
		var a App
		var del uint8
		if err := rows.Scan(&a.ID, &a.PlatformAppID, &a.Name, &del); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
