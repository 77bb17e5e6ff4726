package adminapi_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// TestAnalystAccessOverHTTP: an admin key creates its workspace's analyst user (201, password once),
// rotates it (200, a new password), reads it (never the password) and revokes it (204, then 404);
// a read key is refused, and a deployment without a users.d directory answers 409.
func TestAnalystAccessOverHTTP(t *testing.T) {
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	s := controlplane.NewStore(db.Conn, db.Redis, db.RedisC.KeyPrefix)
	if _, err := s.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	admin, _, err := s.CreateAPIKey(ctx, "test", "acme", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := s.CreateAPIKey(ctx, "test", "acme", "dashboard", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	chc := db.CH
	chc.UsersDir = testenv.ClickHouseUsersDir(t)
	m := &analystaccess.Manager{Conn: db.Conn, ClickHouse: chc, Audit: s, Log: pipeline.Quiet,
		Locker: redisx.Locker{Client: db.Redis, Prefix: db.RedisC.KeyPrefix}}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: s, Log: pipeline.Quiet, Analysts: m}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	f := fixture{srv: srv, store: s, admin: admin, rdr: reader}
	const path = "/api/admin/analyst-access"
	placeholders := map[string]string{"workspaceId": "WORKSPACE_ID", "user": "USER", "database": "USER", "password": "PASSWORD",
		"createdAt": "TIME", "rotatedAt": "TIME", "refreshedAt": "TIME"}

	if status, body := f.call(t, "POST", path, f.rdr, nil); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("read-scoped key: %d %v", status, body)
	}
	if status, body := f.call(t, "GET", path, f.admin, nil); status != 404 || body["error"] != "not_found" {
		t.Fatalf("before a grant: %d %v", status, body)
	}
	status, created := f.call(t, "POST", path, f.admin, nil)
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	wsID := created["analystAccess"].(map[string]any)["workspaceId"].(string) // before masking, which rewrites the map
	t.Cleanup(func() { _ = m.Revoke(context.Background(), "test", wsID) })
	testenv.Golden(t, "testdata/analyst_access_created.golden.json", masked(t, created, placeholders))
	status, rotated := f.call(t, "POST", path, f.admin, nil)
	if status != 200 || rotated["password"] == created["password"] || rotated["password"] == "" {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	status, got := f.call(t, "GET", path, f.admin, nil)
	if status != 200 || got["password"] != nil {
		t.Fatalf("get: %d %v", status, got)
	}
	testenv.Golden(t, "testdata/analyst_access.golden.json", masked(t, got, placeholders))
	log, err := s.AuditLog(ctx, wsID, 10)
	if err != nil || len(log) < 2 || log[0].Action != "analyst_access.rotate" || log[1].Action != "analyst_access.create" {
		t.Errorf("audit: %+v %v", log, err)
	}

	if status, body := f.call(t, "DELETE", path, f.admin, nil); status != 204 || body != nil {
		t.Fatalf("revoke: %d %v", status, body)
	}
	if status, body := f.call(t, "DELETE", path, f.admin, nil); status != 404 || body["error"] != "not_found" {
		t.Fatalf("revoke again: %d %v", status, body)
	}

	// A deployment that gives no users.d directory.
	off := gin.New()
	(&adminapi.API{Store: s, Log: pipeline.Quiet}).Register(off)
	offSrv := httptest.NewServer(off)
	t.Cleanup(offSrv.Close)
	f.srv = offSrv
	status, body := f.call(t, "POST", path, f.admin, nil)
	if status != 409 || body["error"] != "not_configured" || body["message"] == "" {
		t.Fatalf("not configured: %d %v", status, body)
	}
	testenv.Golden(t, "testdata/analyst_access_not_configured.golden.json", masked(t, body, nil))
}
