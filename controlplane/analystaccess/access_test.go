package analystaccess_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

const (
	wsA, wsB = "0190aaaa-0000-7000-8000-00000000000a", "0190bbbb-0000-7000-8000-00000000000b"
	appA     = "app-a"
	appB     = "app-b"

	codeReadonly             = 164 // READONLY: writes, DDL, SET and table functions
	codeDatabaseAccessDenied = 291 // DATABASE_ACCESS_DENIED: outside allow_databases
)

type env struct {
	cfg  clickhousex.Config
	conn driver.Conn
	m    *analystaccess.Manager
}

// setup migrates a fresh database and fills every table the analyst views read with rows of two
// workspaces, every String column unique per row, so that each view shows each workspace's rows.
func setup(t *testing.T) env {
	t.Helper()
	cfg, conn := testenv.ClickHouse(t)
	ctx := testenv.Ctx(t)
	sts, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s\n: %v", st, err)
		}
	}
	cfg.UsersDir = testenv.ClickHouseUsersDir(t)
	rdb, rc := testenv.Redis(t)
	m := &analystaccess.Manager{Conn: conn, ClickHouse: cfg, Locker: redisx.Locker{Client: rdb, Prefix: rc.KeyPrefix},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, ws := range []struct{ id, app string }{{wsA, appA}, {wsB, appB}} {
		fill(t, conn, cfg.Database, ws.id, ws.app)
	}
	e := env{cfg: cfg, conn: conn, m: m}
	t.Cleanup(func() {
		// A test that failed half-way must not leave a user or a database behind.
		for _, ws := range []string{wsA, wsB} {
			_ = m.Revoke(context.Background(), "test", ws)
			_ = os.Remove(filepath.Join(cfg.UsersDir, analystaccess.UserName(cfg.Database, ws)+".xml"))
		}
	})
	return e
}

// fill writes two rows of workspace ws into each table an analyst view reads: workspace_id, app_id
// and selected_app_ids name the workspace and its app, every other String column a unique value, and
// versions and times differ between the two.
func fill(t *testing.T, conn driver.Conn, db, ws, app string) {
	t.Helper()
	ctx := testenv.Ctx(t)
	for _, table := range []string{"workspaces", "apps", "platform_customers", "customer_exclusions", "platform_lifecycle_events",
		"platform_charges", "platform_transactions", "platform_usage_charges", "usage_events", "sync_runs", "acquisitions", "funnel_events",
		"shop_attribution", "customer_mrr_generations", "customer_mrr_spans", "customer_mrr_movements"} {
		rows, err := conn.Query(ctx, "SELECT name, type FROM system.columns WHERE database = ? AND table = ? AND default_kind = ''", db, table)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var types []string
		for rows.Next() {
			var n, ty string
			if err := rows.Scan(&n, &ty); err != nil {
				t.Fatal(err)
			}
			names, types = append(names, n), append(types, ty)
		}
		rows.Close()
		for i := 1; i <= 2; i++ {
			var cols, vals []string
			for j, n := range names {
				var v string
				switch {
				case n == "workspace_id":
					v = "'" + ws + "'"
				case n == "app_id":
					v = "'" + app + "'"
				case n == "selected_app_ids":
					v = "['" + app + "']"
				case types[j] == "String":
					v = fmt.Sprintf("'%s-%s-%d'", n, ws[:8], i)
				case n == "version":
					v = fmt.Sprint(i) // argMax needs distinct versions to pick the same row every time
				case types[j] == "DateTime('UTC')":
					v = fmt.Sprintf("toDateTime('2026-03-0%d 10:00:00', 'UTC')", i)
				default:
					continue
				}
				cols, vals = append(cols, n), append(vals, v)
			}
			if table == "workspaces" && i == 2 {
				continue // one workspace row per workspace
			}
			q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s", table, strings.Join(cols, ", "), strings.Join(vals, ", "))
			if err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// A secret of the workspace that no analyst view reads: it must never be copied.
	if err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO api_keys (key_id, workspace_id, name, key_hash, created_by, created_at, version)
SELECT 'key-%[1]s', '%[1]s', 'k', 'hash-%[1]s', 'x', now(), 1`, ws)); err != nil {
		t.Fatal(err)
	}
}

func openAs(t *testing.T, base clickhousex.Config, user, password, database string) (driver.Conn, error) {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{base.Addr}, Protocol: clickhouse.Native,
		Auth:        clickhouse.Auth{Database: database, Username: user, Password: password},
		DialTimeout: 5 * time.Second, ReadTimeout: 20 * time.Second})
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

func exceptionCode(err error) int32 {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return ex.Code
	}
	return 0
}

// rowsOf renders a query's rows as text, sorted, to compare two reads of the same data.
func rowsOf(t *testing.T, conn driver.Conn, q string) []string {
	t.Helper()
	var out []string
	rows, err := conn.Query(testenv.Ctx(t), "SELECT toString(tuple(*)) AS r FROM ("+q+") ORDER BY r")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGrantShowsOnlyTheWorkspace: the granted user reads, in its database, every analyst view with
// exactly the rows the service's view shows for its workspace, and nothing of the other workspace.
func TestGrantShowsOnlyTheWorkspace(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	g, err := e.m.Grant(ctx, "test", wsA)
	if err != nil {
		t.Fatal(err)
	}
	if g.User != analystaccess.UserName(e.cfg.Database, wsA) || g.Database != g.User || len(g.Password) != 32 || g.RefreshedAt == nil {
		t.Fatalf("grant: %+v", g)
	}
	an, err := openAs(t, e.cfg, g.User, g.Password, g.Database)
	if err != nil {
		t.Fatalf("log in as the granted user: %v", err)
	}
	views := rowsOf(t, e.conn, fmt.Sprintf("SELECT name FROM system.tables WHERE database = '%s' AND name LIKE 'analyst\\\\_%%' AND engine = 'View'", e.cfg.Database))
	if len(views) < 13 {
		t.Fatalf("source views: %v", views)
	}
	for _, v := range views {
		v = strings.Trim(v, "()'")
		filter := "workspace_id = '" + wsA + "'"
		if v == "analyst_apps" {
			filter = "app_id = '" + appA + "'"
		}
		want := rowsOf(t, e.conn, fmt.Sprintf("SELECT * FROM %s.%s WHERE %s", e.cfg.Database, v, filter))
		got := rowsOf(t, an, "SELECT * FROM "+v)
		if len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s as the workspace's analyst:\n got %v\nwant %v", v, got, want)
		}
		if joined := strings.Join(got, "\n"); strings.Contains(joined, wsB) || strings.Contains(joined, wsB[:8]) || strings.Contains(joined, appB) {
			t.Errorf("%s shows the other workspace's rows: %v", v, got)
		}
	}
	// The copies behind the views hold the workspace's rows only, and nothing the views do not read.
	for _, q := range []string{"SELECT DISTINCT workspace_id FROM platform_customers", "SELECT DISTINCT workspace_id FROM workspaces"} {
		if got := rowsOf(t, an, q); !reflect.DeepEqual(got, []string{"('" + wsA + "')"}) {
			t.Errorf("%s: %v", q, got)
		}
	}
	if n := len(rowsOf(t, e.conn, fmt.Sprintf("SELECT name FROM system.tables WHERE database = '%s' AND name = 'api_keys'", g.Database))); n != 0 {
		t.Error("api_keys was copied into the workspace's database")
	}
	var at time.Time
	if err := an.QueryRow(ctx, "SELECT refreshed_at FROM analyst_snapshot").Scan(&at); err != nil || !at.Equal(*g.RefreshedAt) {
		t.Errorf("analyst_snapshot: %v (%v), want %v", at, err, g.RefreshedAt)
	}
	for _, q := range docExamples(t) {
		rows, err := an.Query(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			t.Errorf("example query of docs/ANALYSTS.md as the workspace's analyst:\n%s\n: %v", q, err)
		}
	}
}

// docExamples are the SQL blocks of docs/ANALYSTS.md's "Example queries".
func docExamples(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ANALYSTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Example queries\n")
	if !ok {
		t.Fatal("docs/ANALYSTS.md has no section ## Example queries")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, block := range strings.Split(section, "```sql\n")[1:] {
		q, _, _ := strings.Cut(block, "```")
		out = append(out, strings.TrimSuffix(strings.TrimSpace(q), ";"))
	}
	if len(out) < 4 {
		t.Fatalf("docs/ANALYSTS.md: %d example queries", len(out))
	}
	return out
}

// TestWorkspaceUserCannotReachOtherData: the service's database, another workspace's database and
// writes are refused, by name, through subqueries, joins and table functions.
func TestWorkspaceUserCannotReachOtherData(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	ga, err := e.m.Grant(ctx, "test", wsA)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := e.m.Grant(ctx, "test", wsB)
	if err != nil {
		t.Fatal(err)
	}
	an, err := openAs(t, e.cfg, ga.User, ga.Password, ga.Database)
	if err != nil {
		t.Fatal(err)
	}
	src := e.cfg.Database
	denied := []string{
		"SELECT count() FROM " + src + ".platform_customers",
		"SELECT count() FROM " + src + ".analyst_customers",
		"SELECT count() FROM " + src + ".api_keys",
		"SELECT count() FROM " + gb.Database + ".analyst_customers",
		"SELECT count() FROM analyst_customers WHERE workspace_id IN (SELECT workspace_id FROM " + src + ".workspaces)",
		"SELECT count() FROM analyst_customers WHERE workspace_id GLOBAL IN (SELECT workspace_id FROM " + src + ".workspaces)",
		"SELECT count() FROM analyst_customers ANY LEFT JOIN (SELECT workspace_id, slug FROM " + src + ".workspaces) USING workspace_id",
		"SELECT count() FROM analyst_customers WHERE (SELECT count() FROM " + gb.Database + ".platform_customers) > 0",
	}
	for _, q := range denied {
		if err := an.Exec(ctx, q); exceptionCode(err) != codeDatabaseAccessDenied {
			t.Errorf("%s\n: %v, want code %d", q, err, codeDatabaseAccessDenied)
		}
	}
	refused := []string{
		"INSERT INTO platform_customers (workspace_id) SELECT 'x'",
		"INSERT INTO " + src + ".platform_customers (workspace_id) SELECT 'x'",
		"CREATE TABLE scratch (a UInt8) ENGINE = Memory",
		"DROP TABLE platform_customers",
		"ALTER TABLE platform_customers DELETE WHERE 1",
		"RENAME TABLE analyst_customers TO c",
		"SET max_execution_time = 0",
		"SELECT count() FROM remote('" + e.cfg.Addr + "', " + src + ".platform_customers)",
		"SELECT count() FROM merge('" + src + "', '^platform_customers$')",
		"SELECT count() FROM url('http://127.0.0.1:1/', TSV, 'a String')",
	}
	for _, q := range refused {
		if err := an.Exec(ctx, q); exceptionCode(err) != codeReadonly {
			t.Errorf("%s\n: %v, want the readonly refusal (code %d)", q, err, codeReadonly)
		}
	}
	if _, err := openAs(t, e.cfg, ga.User, ga.Password, src); err == nil {
		t.Error("the workspace's user connected to the service's database")
	}
	if _, err := openAs(t, e.cfg, ga.User, gb.Password, ga.Database); err == nil {
		t.Error("the workspace's user accepted the other workspace's password")
	}
	var n uint64
	if err := an.QueryRow(ctx, "SELECT count() FROM platform_customers").Scan(&n); err != nil || n != 2 {
		t.Errorf("after the refused writes: %d customers, %v", n, err)
	}
}

// TestRefreshRotateRevoke: the copy is as of its refresh; a rotation replaces the password and keeps
// the creation time; a revocation removes the user, its file and its database.
func TestRefreshRotateRevoke(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	g, err := e.m.Grant(ctx, "test", wsA)
	if err != nil {
		t.Fatal(err)
	}
	an, err := openAs(t, e.cfg, g.User, g.Password, g.Database)
	if err != nil {
		t.Fatal(err)
	}
	count := func() uint64 {
		var n uint64
		if err := an.QueryRow(ctx, "SELECT count() FROM analyst_transactions").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	if err := e.conn.Exec(ctx, fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id)
SELECT '%s', '%s', 'tx-later'`, wsA, appA)); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != before {
		t.Errorf("before a refresh the copy changed: %d transactions, want %d", n, before)
	}
	a, err := e.m.Refresh(ctx, wsA)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != before+1 {
		t.Errorf("after the refresh: %d transactions, want %d", n, before+1)
	}
	if a.RefreshedAt == nil || a.RefreshedAt.Before(*g.RefreshedAt) {
		t.Errorf("refreshedAt %v after %v", a.RefreshedAt, g.RefreshedAt)
	}
	got, err := e.m.Get(ctx, wsA)
	if err != nil || got.User != g.User || !got.CreatedAt.Equal(g.CreatedAt) || got.RefreshedAt == nil || !got.RefreshedAt.Equal(*a.RefreshedAt) {
		t.Errorf("get: %+v, %v", got, err)
	}

	r, err := e.m.Grant(ctx, "test", wsA)
	if err != nil {
		t.Fatal(err)
	}
	if r.Password == g.Password || r.User != g.User || !r.CreatedAt.Equal(g.CreatedAt) || r.RotatedAt.Before(g.RotatedAt) {
		t.Errorf("rotation: %+v after %+v", r.Access, g.Access)
	}
	if _, err := openAs(t, e.cfg, r.User, r.Password, r.Database); err != nil {
		t.Errorf("the new password: %v", err)
	}
	testenv.Eventually(t, "the old password to be refused", func() bool {
		_, err := openAs(t, e.cfg, g.User, g.Password, g.Database)
		return err != nil
	})
	list, err := e.m.List(ctx)
	if err != nil || len(list) != 1 || list[0].WorkspaceID != wsA {
		t.Errorf("list: %+v, %v", list, err)
	}

	if err := e.m.Revoke(ctx, "test", wsA); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.cfg.UsersDir, g.User+".xml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the user file is still there: %v", err)
	}
	testenv.Eventually(t, "the revoked user to be refused", func() bool {
		_, err := openAs(t, e.cfg, r.User, r.Password, "system")
		return err != nil
	})
	if n := len(rowsOf(t, e.conn, "SELECT name FROM system.databases WHERE name = '"+g.Database+"'")); n != 0 {
		t.Error("the workspace's database is still there")
	}
	if _, err := e.m.Get(ctx, wsA); !errors.Is(err, controlplane.ErrNotFound) {
		t.Errorf("get after revoke: %v", err)
	}
	if err := e.m.Revoke(ctx, "test", wsA); !errors.Is(err, controlplane.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := e.m.Refresh(ctx, wsA); !errors.Is(err, controlplane.ErrNotFound) {
		t.Errorf("refresh after revoke: %v", err)
	}
}

func TestNotConfigured(t *testing.T) {
	m := &analystaccess.Manager{}
	ctx := context.Background()
	if _, err := m.Grant(ctx, "test", wsA); !errors.Is(err, analystaccess.ErrNotConfigured) {
		t.Errorf("grant: %v", err)
	}
	if _, err := m.Get(ctx, wsA); !errors.Is(err, analystaccess.ErrNotConfigured) {
		t.Errorf("get: %v", err)
	}
	if err := m.Revoke(ctx, "test", wsA); !errors.Is(err, analystaccess.ErrNotConfigured) {
		t.Errorf("revoke: %v", err)
	}
}

// TestScheduleRefreshes: the scheduled round copies what arrived since the grant, and ends with its
// context.
func TestScheduleRefreshes(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	g, err := e.m.Grant(ctx, "test", wsA)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.conn.Exec(ctx, fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id)
SELECT '%s', '%s', 'tx-later'`, wsA, appA)); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.m.Schedule(run, time.Hour) }()
	testenv.Eventually(t, "the scheduled refresh to copy the new transaction", func() bool {
		var n uint64
		err := e.conn.QueryRow(ctx, "SELECT count() FROM "+g.Database+".platform_transactions WHERE transaction_id = 'tx-later'").Scan(&n)
		return err == nil && n == 1
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("schedule: %v", err)
	}
}
