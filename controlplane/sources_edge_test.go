package controlplane_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

func storeWithRedis(t *testing.T) (*controlplane.Store, redis.UniversalClient) {
	t.Helper()
	ctx := testenv.Ctx(t)
	chc := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)
	if _, err := bootstrap.Migrate(ctx, chc, rdb, rc.KeyPrefix, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return controlplane.NewStore(conn, rdb, rc.KeyPrefix), rdb
}

// TestEdgeRecordsFollowEveryWrite: the ingest edge's flat records of a source and its workspace
// hold what every write of them wrote, at once; a fill (after a lookup) creates an absent record and
// never overwrites one, so a fill from a read older than a write cannot bring the old state back.
func TestEdgeRecordsFollowEveryWrite(t *testing.T) {
	s, rdb := storeWithRedis(t)
	withSelectedApp(t, s)
	ctx := testenv.Ctx(t)
	src, _, err := s.CreateSource(ctx, "cli", "acme", "app-1", "Site", []string{"https://app.example", "http://localhost:3000"})
	if err != nil {
		t.Fatal(err)
	}
	srcKey, wsKey := s.EdgeSourceKey(src.WorkspaceID, src.ID), s.EdgeWorkspaceKey(src.WorkspaceID)
	want := func(step, key string, fields map[string]string) {
		t.Helper()
		got, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range fields {
			if got[f] != v {
				t.Errorf("%s: %s = %q, want %q", step, f, got[f], v)
			}
		}
		if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 {
			t.Errorf("%s: %s has no TTL (%v)", step, key, ttl)
		}
	}
	want("created", srcKey, map[string]string{controlplane.EdgeSourcePublicKey: src.PublicKey, controlplane.EdgeSourceApp: "app-1",
		controlplane.EdgeSourceEnabled: "1", controlplane.EdgeSourceOrigins: "\nhttps://app.example\nhttp://localhost:3000\n"})
	if h := rdb.HGet(ctx, srcKey, controlplane.EdgeSourceKeyHash).Val(); len(h) != 64 {
		t.Errorf("key hash %q", h)
	}
	want("created", wsKey, map[string]string{controlplane.EdgeWorkspaceSlug: "acme", controlplane.EdgeWorkspaceAccess: "1",
		controlplane.EdgeWorkspaceApps: "\napp-1\n"})

	w, err := s.Workspace(ctx, src.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSourceEnabled(ctx, "cli", src.WorkspaceID, src.ID, false); err != nil {
		t.Fatal(err)
	}
	want("disabled", srcKey, map[string]string{controlplane.EdgeSourceEnabled: "0"})
	if err := s.FillEdge(ctx, src, w); err != nil { // src and w as read before the write
		t.Fatal(err)
	}
	want("stale fill", srcKey, map[string]string{controlplane.EdgeSourceEnabled: "0"})

	rotated, err := s.RotatePublicKey(ctx, "cli", src.WorkspaceID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	want("rotated", srcKey, map[string]string{controlplane.EdgeSourcePublicKey: rotated.PublicKey})
	if _, err := s.SetSubscriptionStatus(ctx, "cli", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	want("canceled", wsKey, map[string]string{controlplane.EdgeWorkspaceAccess: "0"})
	if _, err := s.SetSelectedApps(ctx, "cli", "acme", []string{"app-1", "app-2"}); err != nil {
		t.Fatal(err)
	}
	want("apps", wsKey, map[string]string{controlplane.EdgeWorkspaceApps: "\napp-1\napp-2\n", controlplane.EdgeWorkspaceAccess: "0"})

	// Expired (or lost): the next lookup's fill creates both from what it read.
	if err := rdb.Del(ctx, srcKey, wsKey).Err(); err != nil {
		t.Fatal(err)
	}
	src2, w2, err := s.SourceWithWorkspace(ctx, rotated.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FillEdge(ctx, src2, w2); err != nil {
		t.Fatal(err)
	}
	want("filled", srcKey, map[string]string{controlplane.EdgeSourcePublicKey: rotated.PublicKey, controlplane.EdgeSourceEnabled: "0"})
	want("filled", wsKey, map[string]string{controlplane.EdgeWorkspaceSlug: "acme", controlplane.EdgeWorkspaceAccess: "0"})
	if h := rdb.HGet(ctx, srcKey, controlplane.EdgeSourceKeyHash).Val(); len(h) != 64 {
		t.Errorf("filled key hash %q", h)
	}
}
