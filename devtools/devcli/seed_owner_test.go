package devcli_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestSeedDemoOwnerSignsIn: the e-mail address and password seed-demo prints (the ready line's
// console fields) sign in as the demo workspace's owner; a second run prints a new password and
// the first stops working.
func TestSeedDemoOwnerSignsIn(t *testing.T) {
	ctx := testenv.Ctx(t)
	chc, rc := testenv.ClickHouseConfig(t), testenv.RedisConfig(t)
	seed := func() (string, string) {
		var out, logs bytes.Buffer
		if code := devcli.Execute(context.Background(), []string{"seed-demo", "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database,
			"--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix}, &out, &logs); code != 0 {
			t.Fatalf("seed-demo: %s", logs.String())
		}
		m := seedLine.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("seed-demo printed %q", out.String())
		}
		return "owner@demo.example", m[5]
	}
	email, first := seed()
	_, second := seed()
	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rdb, err := redisx.Open(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	s := controlplane.NewStore(conn, rdb, rc.KeyPrefix)
	u, err := s.AuthenticateUser(ctx, email, second)
	if err != nil {
		t.Fatalf("sign in with the printed password: %v", err)
	}
	ms, err := s.Memberships(ctx, u.ID)
	if err != nil || len(ms) != 1 || ms[0].Workspace.Slug != "demo" || ms[0].Role != controlplane.RoleOwner {
		t.Errorf("memberships %+v %v: want owner of demo", ms, err)
	}
	if _, err := s.AuthenticateUser(ctx, email, first); err == nil {
		t.Error("the first run's password still works")
	}
}
