package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestAnalystCommands: `revtrack admin analyst` grants a workspace's analyst user (the password is
// printed once and logs in to the workspace's database), shows and lists it without the password,
// refreshes, rotates and revokes it; without a users.d directory it refuses.
func TestAnalystCommands(t *testing.T) {
	chc := testenv.ClickHouseConfig(t)
	dir := testenv.ClickHouseUsersDir(t)
	run := cliRunner(t, chc)
	must := func(args ...string) string {
		t.Helper()
		out, logs, code := run(append(args, "--clickhouse-users-dir", dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs)
		}
		return out
	}
	login := func(user, password string) error {
		conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{chc.Addr}, Protocol: clickhouse.Native,
			Auth: clickhouse.Auth{Database: user, Username: user, Password: password}, DialTimeout: 5 * time.Second})
		if err != nil {
			return err
		}
		defer conn.Close()
		var n uint64
		return conn.QueryRow(context.Background(), "SELECT count() FROM analyst_workspaces").Scan(&n)
	}
	must("admin", "workspace", "create", "acme")
	t.Cleanup(func() { run("admin", "analyst", "revoke", "acme", "--clickhouse-users-dir", dir) })

	var g struct {
		analystaccess.Access
		Password string `json:"password"`
		Note     string `json:"note"`
	}
	if err := json.Unmarshal([]byte(must("admin", "analyst", "grant", "acme")), &g); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(g.User, chc.Database+"_analyst_") || g.Database != g.User || len(g.Password) != 32 || g.Note == "" {
		t.Fatalf("grant: %+v", g)
	}
	if err := login(g.User, g.Password); err != nil {
		t.Fatalf("log in with the printed password: %v", err)
	}
	show := must("admin", "analyst", "show", "acme")
	if strings.Contains(show, g.Password) || !strings.Contains(show, g.User) || strings.Contains(show, `"refreshedAt": null`) {
		t.Errorf("show: %s", show)
	}
	if list := must("admin", "analyst", "list"); strings.Contains(list, g.Password) || !strings.Contains(list, g.User) {
		t.Errorf("list: %s", list)
	}
	must("admin", "analyst", "refresh", "acme")
	must("admin", "analyst", "refresh", "--all")
	if _, logs, code := run("admin", "analyst", "refresh", "--clickhouse-users-dir", dir); code == 0 || !strings.Contains(logs, "--all") {
		t.Errorf("refresh without a workspace: exit %d: %s", code, logs)
	}

	var r struct {
		Password string `json:"password"`
	}
	if err := json.Unmarshal([]byte(must("admin", "analyst", "grant", "acme")), &r); err != nil || r.Password == g.Password {
		t.Fatalf("rotate: %+v %v", r, err)
	}
	if err := login(g.User, r.Password); err != nil {
		t.Errorf("the rotated password: %v", err)
	}
	must("admin", "analyst", "revoke", "acme")
	testenv.Eventually(t, "the revoked user to be refused", func() bool { return login(g.User, r.Password) != nil })
	if _, logs, code := run("admin", "analyst", "show", "acme", "--clickhouse-users-dir", dir); code == 0 || !strings.Contains(logs, "no analyst access") {
		t.Errorf("show after revoke: exit %d: %s", code, logs)
	}
	if _, logs, code := run("admin", "analyst", "grant", "acme", "--clickhouse-users-dir", ""); code == 0 || !strings.Contains(logs, "--clickhouse-users-dir") {
		t.Errorf("grant without a users.d directory: exit %d: %s", code, logs)
	}
}
