package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The test stack's ClickHouse has no passwordless user: revtrack connects as the user `stack env`
// prints. `make test` exports it; a bare `go test` (an editor, one package) reads it from the stack.
var (
	credsOnce          sync.Once
	credsUser, credsPW string
	credsErr           error
)

// clickHouseCredentials returns REVTRACK_CLICKHOUSE_USERNAME and _PASSWORD, or else those of
// `STACK_NAME=test deploy/local/stack env`, which it then sets in this process's environment: the
// tests that run the command line in-process or start it as a child read them from there, like
// every other REVTRACK_* setting.
func clickHouseCredentials(t testing.TB) (string, string) {
	t.Helper()
	credsOnce.Do(func() {
		credsUser, credsPW = os.Getenv("REVTRACK_CLICKHOUSE_USERNAME"), os.Getenv("REVTRACK_CLICKHOUSE_PASSWORD")
		if credsUser != "" {
			return
		}
		env, err := StackEnv("test")
		if err != nil {
			credsErr = err
			return
		}
		credsUser, credsPW = env["REVTRACK_CLICKHOUSE_USERNAME"], env["REVTRACK_CLICKHOUSE_PASSWORD"]
		for k, v := range env {
			if os.Getenv(k) == "" {
				_ = os.Setenv(k, v)
			}
		}
	})
	if credsErr != nil {
		t.Fatalf("ClickHouse credentials: REVTRACK_CLICKHOUSE_USERNAME is not set and %v", credsErr)
	}
	if credsUser == "" {
		t.Fatal("ClickHouse credentials: neither REVTRACK_CLICKHOUSE_USERNAME nor `deploy/local/stack env` names a user")
	}
	return credsUser, credsPW
}

var exportRe = regexp.MustCompile(`(?m)^export ([A-Z_]+)=(.*)$`)

// StackEnv runs `STACK_NAME=<name> deploy/local/stack env` and returns the variables it exports.
func StackEnv(name string) (map[string]string, error) {
	cmd := exec.Command(filepath.Join(repoRoot(), "deploy", "local", "stack"), "env")
	cmd.Env = append(os.Environ(), "STACK_NAME="+name)
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, m := range exportRe.FindAllStringSubmatch(string(out), -1) {
		vars[m[1]] = unquoteShell(m[2])
	}
	return vars, nil
}

// unquoteShell undoes bash's printf %q for printable values: a backslash escapes the next byte
// (generated passwords are hex and need none; a password set by hand might).
func unquoteShell(v string) string { return shellEscapeRe.ReplaceAllString(v, "$1") }

var shellEscapeRe = regexp.MustCompile(`\\(.)`)

// ClickHouseUsersDir is the test stack's users.d directory (REVTRACK_CLICKHOUSE_USERS_DIR, or the
// stack's), where tests that create ClickHouse users write them.
func ClickHouseUsersDir(t testing.TB) string {
	t.Helper()
	clickHouseCredentials(t)
	if d := os.Getenv("REVTRACK_CLICKHOUSE_USERS_DIR"); d != "" {
		return d
	}
	env, err := StackEnv("test")
	if err != nil || env["REVTRACK_CLICKHOUSE_USERS_DIR"] == "" {
		t.Fatalf("REVTRACK_CLICKHOUSE_USERS_DIR is not set and `deploy/local/stack env` does not print it (%v)", err)
	}
	return env["REVTRACK_CLICKHOUSE_USERS_DIR"]
}

// dropAnalystAccess removes what per-workspace analyst access made for the test database db (its
// <db>_analyst_* databases and users, controlplane/analystaccess) and a failed test left behind: the
// test stack is shared and long-lived.
func dropAnalystAccess(srv driver.Conn, db string) {
	ctx := context.Background()
	rows, err := srv.Query(ctx, "SELECT name FROM system.databases WHERE startsWith(name, ?)", db+"_analyst_")
	if err != nil {
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	rows.Close()
	for _, n := range names {
		_ = srv.Exec(ctx, "DROP DATABASE IF EXISTS "+n)
	}
	if dir := os.Getenv("REVTRACK_CLICKHOUSE_USERS_DIR"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, db+"_analyst_*.xml"))
		for _, f := range files {
			_ = os.Remove(f)
		}
	}
}
