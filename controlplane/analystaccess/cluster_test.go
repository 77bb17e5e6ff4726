package analystaccess_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/clustertest"
)

// clusterSetup migrates a database of the test's own on the local cluster (deploy/local/stack up
// --cluster, REVTRACK_CLUSTER_TESTS=1 with `env --cluster` exported) and fills it as setup does.
// It returns the environment and every node's address, the configured one first.
func clusterSetup(t *testing.T) (env, []string) {
	t.Helper()
	cfg := testenv.ClusterClickHouse(t, "analyst_cluster_test_")
	nodes := append([]string{cfg.Addr}, strings.Split(os.Getenv("STACK_CLICKHOUSE_NODES"), ",")...)
	if cfg.UsersDir == "" || len(nodes) != 4 {
		t.Fatal("export `deploy/local/stack env --cluster` (cluster, users.d and the other three nodes)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clustertest.Migrate(t, ctx, cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn, err := clickhousex.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	m := &analystaccess.Manager{Conn: conn, ClickHouse: cfg, Locker: clustertest.NoLock{}, Log: log}
	for _, ws := range []struct{ id, app string }{{wsA, appA}, {wsB, appB}} {
		fill(t, conn, cfg.Database, ws.id, ws.app)
	}
	t.Cleanup(func() {
		for _, ws := range []string{wsA, wsB} {
			_ = m.Revoke(context.Background(), "test", ws)
			// A grant that failed half-way left a database and no record for Revoke to find.
			_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+analystaccess.UserName(cfg.Database, ws)+" ON CLUSTER "+cfg.Cluster)
			_ = os.Remove(filepath.Join(cfg.UsersDir, analystaccess.UserName(cfg.Database, ws)+".xml"))
		}
	})
	return env{cfg: cfg, conn: conn, m: m}, nodes
}

// TestClusterWorkspaceDatabases: on a cluster of 2 shards x 2 replicas, each workspace's analyst
// reads, on every node, exactly its workspace's rows of every view; a refresh brings new rows to
// every node; a revocation removes the database, the user and the copies' ZooKeeper paths.
func TestClusterWorkspaceDatabases(t *testing.T) {
	e, nodes := clusterSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	grants := map[string]analystaccess.Grant{}
	for _, ws := range []string{wsA, wsB} {
		g, err := e.m.Grant(ctx, "test", ws)
		if err != nil {
			t.Fatal(err)
		}
		grants[ws] = g
	}
	t.Logf("two grants in %s", time.Since(start).Round(time.Millisecond))
	views := rowsOf(t, e.conn, fmt.Sprintf("SELECT name FROM system.tables WHERE database = '%s' AND name LIKE 'analyst\\\\_%%' AND engine = 'View'", e.cfg.Database))
	if len(views) < 13 {
		t.Fatalf("source views: %v", views)
	}
	// The copies are one replication group of the four nodes, on a path of the workspace database's own.
	ga := grants[wsA]
	zkPath := "/clickhouse/tables/all/" + ga.Database
	if got := rowsOf(t, e.conn, "SELECT DISTINCT toString(total_replicas) FROM system.replicas WHERE database = '"+ga.Database+"'"); !reflect.DeepEqual(got, []string{"('4')"}) {
		t.Errorf("replicas of the copies: %v, want 4 each", got)
	}
	if got := rowsOf(t, e.conn, "SELECT DISTINCT zookeeper_path LIKE '"+zkPath+"/%' FROM system.replicas WHERE database = '"+ga.Database+"'"); !reflect.DeepEqual(got, []string{"(1)"}) {
		t.Errorf("copies outside %s: %v", zkPath, got)
	}
	analysts := map[string]map[string]driver.Conn{} // workspace -> node -> connection
	for ws, g := range grants {
		analysts[ws] = map[string]driver.Conn{}
		for _, addr := range nodes {
			c := e.cfg
			c.Addr = addr
			var conn driver.Conn
			testenv.Eventually(t, "node "+addr+" to load the analyst user", func() bool {
				var err error
				conn, err = openAs(t, c, g.User, g.Password, g.Database)
				return err == nil
			})
			analysts[ws][addr] = conn
		}
	}
	apps := map[string]string{wsA: appA, wsB: appB}
	for ws, byNode := range analysts {
		other := wsA
		if ws == wsA {
			other = wsB
		}
		for _, v := range views {
			v = strings.Trim(v, "()'")
			filter := "workspace_id = '" + ws + "'"
			if v == "analyst_apps" {
				filter = "app_id = '" + apps[ws] + "'"
			}
			want := rowsOf(t, e.conn, fmt.Sprintf("SELECT * FROM %s.%s WHERE %s", e.cfg.Database, v, filter))
			for addr, an := range byNode {
				got := rowsOf(t, an, "SELECT * FROM "+v)
				if len(got) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("%s on %s as %s's analyst:\n got %v\nwant %v", v, addr, ws[:8], got, want)
				}
				if joined := strings.Join(got, "\n"); strings.Contains(joined, other) || strings.Contains(joined, other[:8]) || strings.Contains(joined, apps[other]) {
					t.Errorf("%s on %s shows the other workspace's rows: %v", v, addr, got)
				}
			}
		}
	}

	// A refresh after new data: every node reads it as soon as the refresh returns.
	if err := e.conn.Exec(ctx, fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id)
SELECT '%s', '%s', 'tx-later'`, wsA, appA)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := e.m.Refresh(ctx, wsA); err != nil {
		t.Fatal(err)
	}
	t.Logf("a refresh in %s", time.Since(start).Round(time.Millisecond))
	for addr, an := range analysts[wsA] {
		if got := rowsOf(t, an, "SELECT transaction_id FROM analyst_transactions WHERE transaction_id = 'tx-later'"); len(got) != 1 {
			t.Errorf("after the refresh, %s: %v", addr, got)
		}
	}
	if got := rowsOf(t, e.conn, "SELECT name FROM system.zookeeper WHERE path = '"+zkPath+"'"); len(got) == 0 || len(got) > 20 {
		t.Errorf("ZooKeeper paths of the copies after a refresh: %v (the replaced copies' must go)", got)
	}

	for _, ws := range []string{wsA, wsB} {
		if err := e.m.Revoke(ctx, "test", ws); err != nil {
			t.Fatal(err)
		}
	}
	for _, addr := range nodes {
		c := e.cfg
		c.Addr = addr
		for _, g := range grants {
			testenv.Eventually(t, "node "+addr+" to refuse the revoked user", func() bool {
				_, err := openAs(t, c, g.User, g.Password, "system")
				return err != nil
			})
		}
	}
	for _, addr := range nodes {
		c := e.cfg
		c.Addr = addr
		conn, err := clickhousex.Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range grants {
			if got := rowsOf(t, conn, "SELECT name FROM system.databases WHERE name = '"+g.Database+"'"); len(got) != 0 {
				t.Errorf("%s still has database %s", addr, g.Database)
			}
		}
		_ = conn.Close()
	}
	for _, g := range grants {
		// The database's own node stays, empty: ClickHouse removes a table's path, not its parents.
		if got := rowsOf(t, e.conn, "SELECT name FROM system.zookeeper WHERE path = '/clickhouse/tables/all/"+g.Database+"'"); len(got) != 0 {
			t.Errorf("ZooKeeper still holds copies of %s: %v", g.Database, got)
		}
	}
}
