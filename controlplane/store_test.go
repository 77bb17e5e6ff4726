package controlplane_test

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

// twoInstances returns two stores over the same ClickHouse database and Redis, like two replicas.
func twoInstances(t *testing.T) (*controlplane.Store, *controlplane.Store) {
	a, b, _ := twoInstancesWithFlush(t)
	return a, b
}

// twoInstancesWithFlush also returns a function that empties the stores' Redis keys, as if Redis
// had lost its data.
func twoInstancesWithFlush(t *testing.T) (*controlplane.Store, *controlplane.Store, func()) {
	t.Helper()
	ctx := testenv.Ctx(t)
	chc := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)
	if _, err := bootstrap.Migrate(ctx, chc, rdb, rc.KeyPrefix, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var stores [2]*controlplane.Store
	for i := range stores {
		conn, err := clickhousex.Open(ctx, chc)
		if err != nil {
			t.Fatal(err)
		}
		r, err := redisx.Open(ctx, rc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(); r.Close() })
		stores[i] = controlplane.NewStore(conn, r, rc.KeyPrefix)
	}
	flush := func() {
		// Key by key: the keys are in many slots, which one DEL may not span on a Redis Cluster.
		if err := redisx.DeleteMatching(ctx, rdb, rc.KeyPrefix+"*"); err != nil {
			t.Fatal(err)
		}
	}
	return stores[0], stores[1], flush
}

func TestWorkspaceAppsAndMembers(t *testing.T) {
	a, _ := twoInstances(t)
	ctx := testenv.Ctx(t)
	ws, err := a.CreateWorkspace(ctx, "cli", "acme", "Acme Apps", controlplane.StatusActive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateWorkspace(ctx, "cli", "acme", "Again", controlplane.StatusActive); !errors.Is(err, controlplane.ErrConflict) {
		t.Fatalf("duplicate slug: %v", err)
	}
	if _, err := a.CreateWorkspace(ctx, "cli", "Bad Slug", "x", controlplane.StatusActive); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("bad slug: %v", err)
	}
	for _, app := range []controlplane.App{{ID: "app-1", Name: "Upsell"}, {ID: "app-2", Name: "Reviews"}} {
		if err := a.PutApp(ctx, "cli", app); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.SetSelectedApps(ctx, "cli", "acme", []string{"app-9"}); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("unknown app: %v", err)
	}
	got, err := a.SetSelectedApps(ctx, "cli", "acme", []string{"app-2", "app-1", "app-2"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.SelectedAppIDs, ",") != "app-1,app-2" {
		t.Fatalf("selected %v", got.SelectedAppIDs)
	}
	cached, err := a.Workspace(ctx, ws.ID)
	if err != nil || len(cached.SelectedAppIDs) != 2 || !cached.HasAccess() {
		t.Fatalf("workspace by id: %+v %v", cached, err)
	}
	if _, err := a.SetSubscriptionStatus(ctx, "cli", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	if w, _ := a.Workspace(ctx, ws.ID); w.HasAccess() {
		t.Fatal("cached workspace still active after the subscription was canceled")
	}
	for email, role := range map[string]string{"o@acme.example": "owner", "m@acme.example": "member"} {
		if _, err := a.PutMember(ctx, "cli", "acme", email, role); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.PutMember(ctx, "cli", "acme", "x@acme.example", "root"); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("bad role: %v", err)
	}
	ms, err := a.Members(ctx, ws.ID)
	if err != nil || len(ms) != 2 {
		t.Fatalf("members %v %v", ms, err)
	}
	log, err := a.AuditLog(ctx, ws.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, e := range log {
		actions[e.Action]++
	}
	for _, want := range []string{"workspace.create", "workspace.select_apps", "workspace.subscription_status", "member.put"} {
		if actions[want] == 0 {
			t.Errorf("audit log lacks %s: %v", want, actions)
		}
	}
}

func TestAPIKeyRevocationIsImmediateOnEveryInstance(t *testing.T) {
	a, b := twoInstances(t)
	ctx := testenv.Ctx(t)
	if _, err := a.CreateWorkspace(ctx, "cli", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	k1, meta1, err := a.CreateAPIKey(ctx, "cli", "acme", "reporting", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	k2, _, err := a.CreateAPIKey(ctx, "cli", "acme", "mcp", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k1, controlplane.APIKeyPrefix) {
		t.Fatalf("key %q lacks the prefix", k1[:8])
	}
	// Both instances accept the key; b caches it in the shared Redis.
	for _, s := range []*controlplane.Store{a, b} {
		if p, err := s.AuthenticateAPIKey(ctx, k1); err != nil || p.KeyID != meta1.ID {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
	}
	if _, err := a.RevokeAPIKey(ctx, "cli", meta1.ID); err != nil {
		t.Fatal(err)
	}
	// The other instance refuses it on the very next request; the other key still works.
	if _, err := b.AuthenticateAPIKey(ctx, k1); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("revoked key on the other instance: %v", err)
	}
	if _, err := b.AuthenticateAPIKey(ctx, k2); err != nil {
		t.Fatalf("unrevoked key: %v", err)
	}
	for _, bad := range []string{"", "revtrack_sk_nope", k1 + "x", strings.ToUpper(k2)} {
		if _, err := b.AuthenticateAPIKey(ctx, bad); !errors.Is(err, controlplane.ErrInvalidKey) {
			t.Errorf("key %q: %v", bad, err)
		}
	}
	assertNoPlaintext(t, a, k1, k2)
	keys, err := a.APIKeys(ctx, meta1.WorkspaceID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v %v", keys, err)
	}
	for _, k := range keys {
		if (k.ID == meta1.ID) != (k.RevokedAt != nil) {
			t.Errorf("key %s revoked=%v", k.Name, k.RevokedAt != nil)
		}
	}
}

func TestRevocationSurvivesColdCache(t *testing.T) {
	a, b, flush := twoInstancesWithFlush(t)
	ctx := testenv.Ctx(t)
	if _, err := a.CreateWorkspace(ctx, "cli", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	k, meta, err := a.CreateAPIKey(ctx, "cli", "acme", "ci", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RevokeAPIKey(ctx, "cli", meta.ID); err != nil {
		t.Fatal(err)
	}
	// Even if Redis lost its data, ClickHouse holds the revocation.
	flush()
	if _, err := b.AuthenticateAPIKey(ctx, k); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("revoked key after cache loss: %v", err)
	}
}

// assertNoPlaintext checks that neither ClickHouse nor Redis holds a key's value.
func assertNoPlaintext(t *testing.T, s *controlplane.Store, keys ...string) {
	t.Helper()
	ctx := testenv.Ctx(t)
	for _, k := range keys {
		n, err := s.CountOccurrences(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("a key's plaintext is stored in %d places", n)
		}
	}
}
