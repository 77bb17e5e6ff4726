package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestUserCommands: `revtrack admin user create` makes a user who signs in with the printed
// (generated) password or one read from standard input; `invite` and `reset-password` print
// one-time links with the token in the fragment that work once; `sessions revoke` ends every
// session of the user at once.
func TestUserCommands(t *testing.T) {
	ctx := testenv.Ctx(t)
	chc, rc := testenv.ClickHouseConfig(t), testenv.RedisConfig(t)
	run := func(args ...string) string {
		t.Helper()
		var out, logs bytes.Buffer
		args = append(args, "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database, "--redis-addr", rc.Addr,
			"--redis-key-prefix", rc.KeyPrefix, "--base-url", "https://console.example")
		if code := cli.Execute(context.Background(), args, &out, &logs); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs.String())
		}
		return out.String()
	}
	run("admin", "workspace", "create", "acme")
	var created struct {
		User     controlplane.User `json:"user"`
		Password string            `json:"password"`
	}
	if err := json.Unmarshal([]byte(run("admin", "user", "create", "--email", "Boss@Acme.test", "--name", "Boss", "--workspace", "acme", "--role", "owner")), &created); err != nil {
		t.Fatal(err)
	}
	if created.User.Email != "boss@acme.test" || len(created.Password) != 24 {
		t.Fatalf("create: %+v", created)
	}

	// --password-stdin, through the command tree with its standard input set.
	var out, logs bytes.Buffer
	root := cli.New(&out, &logs)
	root.SetIn(strings.NewReader("a password from stdin\n"))
	root.SetArgs([]string{"admin", "user", "create", "--email", "ops@acme.test", "--workspace", "acme", "--role", "admin", "--password-stdin",
		"--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database, "--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix})
	if err := root.ExecuteContext(ctx); err != nil || strings.Contains(out.String(), "a password from stdin") {
		t.Fatalf("--password-stdin: %v %s %s", err, out.String(), logs.String())
	}

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
	if _, err := s.AuthenticateUser(ctx, "boss@acme.test", created.Password); err != nil {
		t.Errorf("sign in with the generated password: %v", err)
	}
	if _, err := s.AuthenticateUser(ctx, "ops@acme.test", "a password from stdin"); err != nil {
		t.Errorf("sign in with the password from stdin: %v", err)
	}

	link := func(raw, route string) string {
		t.Helper()
		var v struct {
			Link string `json:"link"`
		}
		_ = json.Unmarshal([]byte(raw), &v)
		u, err := url.Parse(v.Link)
		if err != nil || u.Host != "console.example" || !strings.HasPrefix(u.Fragment, route+"?token=") {
			t.Fatalf("link %q", v.Link)
		}
		return strings.TrimPrefix(u.Fragment, route+"?token=")
	}
	inv := link(run("admin", "user", "invite", "--workspace", "acme", "--email", "new@acme.test", "--role", "member"), "/accept-invitation")
	if _, err := s.AcceptInvitation(ctx, inv, "New", "a new person's password"); err != nil {
		t.Errorf("accept the printed invitation: %v", err)
	}
	if _, err := s.AcceptInvitation(ctx, inv, "New", "a new person's password"); err == nil {
		t.Error("the invitation worked twice")
	}
	reset := link(run("admin", "user", "reset-password", "--email", "boss@acme.test"), "/reset-password")
	if _, err := s.CompletePasswordReset(ctx, reset, "the boss's new password"); err != nil {
		t.Errorf("use the printed reset link: %v", err)
	}

	sessions, err := authn.NewSessions(rdb, rc.KeyPrefix, authn.DefaultSessionConfig(), "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		id, _, err := sessions.Create(ctx, controlplane.UserID("boss@acme.test"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if got := run("admin", "user", "sessions", "revoke", "--email", "boss@acme.test"); !strings.Contains(got, `"sessionsEnded": 2`) {
		t.Errorf("revoke: %s", got)
	}
	for _, id := range ids {
		if _, err := sessions.Lookup(ctx, id); err == nil {
			t.Error("a session survived `sessions revoke`")
		}
	}
}
