package schemas

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
)

// analystDB is a migrated test database holding analystFixture.
func analystDB(t *testing.T) (clickhousex.Config, driver.Conn) {
	t.Helper()
	cfg, conn := testenv.ClickHouse(t)
	ctx := testenv.Ctx(t)
	for _, st := range append(migrationStatements(t), analystFixture...) {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s\n: %v", st, err)
		}
	}
	return cfg, conn
}

// TestAnalystViewsDeduplicate: on ClickHouse 18.16 every view shows each entity once with its latest
// version (the same checks run on the current engine in compat_analyst_test.go), and every view and
// column is documented in docs/ANALYSTS.md.
func TestAnalystViewsDeduplicate(t *testing.T) {
	cfg, conn := analystDB(t)
	ctx := testenv.Ctx(t)
	for _, c := range analystChecks {
		var ok uint8
		if err := conn.QueryRow(ctx, c.query).Scan(&ok); err != nil || ok != 1 {
			t.Errorf("%s: ok=%d err=%v", c.name, ok, err)
		}
	}
	checkAnalystDocs(t, conn, cfg.Database)
}

// checkAnalystDocs: docs/ANALYSTS.md has a section `### analyst_x` per view that names each of its
// columns in backquotes, so the documented surface cannot drift from the views.
func checkAnalystDocs(t *testing.T, conn driver.Conn, database string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "ANALYSTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "### "); ok {
			cur = strings.Trim(strings.Fields(name)[0], "`")
			continue
		}
		if strings.HasPrefix(line, "## ") {
			cur = ""
		}
		if cur != "" {
			sections[cur] += line + "\n"
		}
	}
	for _, v := range analystViews(t) {
		sec, ok := sections[v]
		if !ok {
			t.Errorf("docs/ANALYSTS.md has no section ### %s", v)
			continue
		}
		rows, err := conn.Query(testenv.Ctx(t), "SELECT name, type FROM system.columns WHERE database = ? AND table = ?",
			database, v)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			n++
			if !strings.Contains(sec, "`"+name+"`") {
				t.Errorf("docs/ANALYSTS.md, ### %s: column `%s` (%s) is not documented", v, name, typ)
			}
		}
		rows.Close()
		if n == 0 {
			t.Errorf("view %s has no columns in system.columns", v)
		}
	}
}

// stackEnv reads the test stack's ClickHouse user settings: from the environment (`make test`
// exports `deploy/local/stack env`), else from `STACK_NAME=test deploy/local/stack env`.
func stackEnv(t *testing.T) map[string]string {
	t.Helper()
	keys := []string{"STACK_CLICKHOUSE_ANALYST_USER", "STACK_CLICKHOUSE_ANALYST_PASSWORD", "STACK_CLICKHOUSE_USERS_DIR"}
	out := map[string]string{}
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			out[k] = v
		}
	}
	if len(out) == len(keys) {
		return out
	}
	cmd := exec.Command(filepath.Join("..", "deploy", "local", "stack"), "env")
	cmd.Env = append(os.Environ(), "STACK_NAME=test")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("STACK_NAME=test deploy/local/stack env: %v", err)
	}
	re := regexp.MustCompile(`(?m)^export (STACK_CLICKHOUSE_[A-Z_]+)=(.*)$`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2] // the stack prints %q-quoted values; ours are plain words and paths
	}
	for _, k := range keys {
		if out[k] == "" {
			t.Fatalf("%s is not set and `deploy/local/stack env` does not print it", k)
		}
	}
	return out
}

// openAs connects as user to database on the test stack's ClickHouse.
func openAs(t *testing.T, base clickhousex.Config, user, password, database string) (driver.Conn, error) {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{base.Addr},
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: database, Username: user, Password: password},
		DialTimeout: 5 * time.Second,
		ReadTimeout: 20 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	if err := conn.Ping(testenv.Ctx(t)); err != nil {
		_ = conn.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, nil
}

// exceptionCode is the ClickHouse error code of err, or 0.
func exceptionCode(err error) int32 {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return ex.Code
	}
	return 0
}

const (
	codeReadonly             = 164 // READONLY: the readonly setting refuses writes, DDL and SET
	codeDatabaseAccessDenied = 291 // DATABASE_ACCESS_DENIED: outside allow_databases
)

// TestStackAnalystUser: the local stack's `analyst` user exists with the password `stack env`
// prints, and is read-only. The stack's user may read only the `revtrack` database, which tests do
// not use, so what it can and cannot do on data is checked in TestAnalystUserIsReadOnly with a user
// rendered from the same template for the test's database.
func TestStackAnalystUser(t *testing.T) {
	env := stackEnv(t)
	base, _ := testenv.ClickHouse(t)
	var conn driver.Conn
	testenv.Eventually(t, "the stack's analyst user to authenticate (`make stack-test` writes it into users.d)", func() bool {
		c, err := openAs(t, base, env["STACK_CLICKHOUSE_ANALYST_USER"], env["STACK_CLICKHOUSE_ANALYST_PASSWORD"], "system")
		conn = c
		return err == nil
	})
	ctx := testenv.Ctx(t)
	var readonly string
	if err := conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'readonly'").Scan(&readonly); err != nil || readonly != "1" {
		t.Errorf("readonly = %q (%v), want 1", readonly, err)
	}
	if err := conn.Exec(ctx, "CREATE DATABASE analyst_must_not_create"); exceptionCode(err) != codeReadonly {
		t.Errorf("CREATE DATABASE as analyst: %v, want code %d", err, codeReadonly)
	}
	if err := conn.Exec(ctx, "SELECT count() FROM "+base.Database+".schema_migrations"); exceptionCode(err) != codeDatabaseAccessDenied {
		t.Errorf("reading another database as analyst: %v, want code %d", err, codeDatabaseAccessDenied)
	}
	if _, err := openAs(t, base, env["STACK_CLICKHOUSE_ANALYST_USER"], "wrong-password", "system"); err == nil {
		t.Error("the analyst user accepted a wrong password")
	}
}

// TestAnalystUserIsReadOnly renders deploy/local/clickhouse/analyst.xml.tmpl for a short-lived user
// limited to this test's database, drops it into the running server's users.d (which ClickHouse
// re-reads within seconds, no restart), and checks what the analyst user can do: read every view,
// de-duplicated, and nothing else.
func TestAnalystUserIsReadOnly(t *testing.T) {
	env := stackEnv(t)
	cfg, _ := analystDB(t)
	user, password := "analyst_t"+testenv.ID(), testenv.ID()+testenv.ID()
	writeUsersFile(t, env["STACK_CLICKHOUSE_USERS_DIR"], user, password, cfg.Database)

	var conn driver.Conn
	testenv.Eventually(t, "ClickHouse to load the new users.d file", func() bool {
		c, err := openAs(t, cfg, user, password, cfg.Database)
		conn = c
		return err == nil
	})
	ctx := testenv.Ctx(t)

	for _, v := range analystViews(t) {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+v).Scan(&n); err != nil || n == 0 {
			t.Errorf("SELECT from %s as analyst: %d rows, %v", v, n, err)
		}
	}
	for _, c := range analystChecks {
		var ok uint8
		if err := conn.QueryRow(ctx, c.query).Scan(&ok); err != nil || ok != 1 {
			t.Errorf("as analyst, %s: ok=%d err=%v", c.name, ok, err)
		}
	}

	refused := []string{
		"INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at) " +
			"SELECT 'ws', 'app-1', 'ue-9', 'c-1', 'x', 1, now(), now()",
		"INSERT INTO analyst_usage_events SELECT * FROM analyst_usage_events",
		"ALTER TABLE platform_customers ADD COLUMN analyst_note String",
		"ALTER TABLE platform_transactions DELETE WHERE 1",
		"DROP TABLE platform_transactions",
		"DROP TABLE analyst_transactions",
		"TRUNCATE TABLE usage_events",
		"CREATE TABLE analyst_scratch (a UInt8) ENGINE = Memory",
		"CREATE VIEW analyst_mine AS SELECT 1",
		"RENAME TABLE analyst_customers TO analyst_customers_old",
		"SET max_threads = 1",
	}
	for _, q := range refused {
		if err := conn.Exec(ctx, q); exceptionCode(err) != codeReadonly {
			t.Errorf("%s\nas analyst: %v, want the readonly refusal (code %d)", q, err, codeReadonly)
		}
	}
	for _, q := range analystExamples(t) {
		rows, err := conn.Query(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			t.Errorf("example query of docs/ANALYSTS.md as analyst:\n%s\n: %v", q, err)
		}
	}
	// The tables are intact.
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM analyst_transactions").Scan(&n); err != nil || n != 3 {
		t.Errorf("after the refused writes: %d transactions, %v", n, err)
	}

	// Only its database: another one is refused, to read and to connect to.
	other, _ := testenv.ClickHouse(t)
	if err := conn.Exec(ctx, "SELECT 1 FROM "+other.Database+".system_probe"); exceptionCode(err) != codeDatabaseAccessDenied {
		t.Errorf("reading another database: %v, want code %d", err, codeDatabaseAccessDenied)
	}
	if _, err := openAs(t, cfg, user, password, other.Database); err == nil {
		t.Error("the analyst user connected to a database it is not allowed")
	}
}

// writeUsersFile renders the stack's analyst template into dir as <user>.xml, atomically (the server
// must never read half a file), and removes it when the test ends.
func writeUsersFile(t *testing.T, dir, user, password, database string) {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join("..", "deploy", "local", "clickhouse", "analyst.xml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(password))
	xml := strings.NewReplacer("@ANALYST_USER@", user, "@ANALYST_PASSWORD_SHA256@", hex.EncodeToString(sum[:]),
		"@ANALYST_DATABASE@", database).Replace(string(tmpl))
	if strings.Contains(xml, "@ANALYST_") {
		t.Fatalf("analyst.xml.tmpl has a placeholder the test does not know:\n%s", xml)
	}
	path := filepath.Join(dir, user+".xml")
	tmp := filepath.Join(dir, "."+user+".tmp")
	if err := os.WriteFile(tmp, []byte(xml), 0o644); err != nil {
		t.Fatalf("write %s (is the test stack running? `make stack-test`): %v", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(path) })
}
