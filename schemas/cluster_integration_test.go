package schemas

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
)

// The cluster tests run against the local stack's cluster shape (deploy/local/stack up --cluster:
// ClickHouse 18.16, 2 shards x 2 replicas as cluster revtrack) when REVTRACK_CLUSTER_TESTS=1, with
// the variables `deploy/local/stack env --cluster` prints.

type clusterEnv struct {
	cfg   clickhousex.Config
	conn  driver.Conn
	nodes map[string]driver.Conn // address: connection to the test's database on that node
	addrs []string               // every node, the first one first
}

// The tests of the package share one migrated database (a migration on the cluster takes half a
// minute); each writes rows of its own sources and workspaces. TestMain drops it at the end.
var shared struct {
	once     sync.Once
	env      *clusterEnv
	err      error
	cleanups []func()
}

func newClusterEnv(t *testing.T) *clusterEnv {
	t.Helper()
	cfg := testenv.ClusterClickHouse(t, "cluster_test_")
	shared.once.Do(func() {
		start := time.Now()
		shared.env, shared.err = setUpCluster(cfg)
		t.Logf("migrated the cluster in %s", time.Since(start).Round(time.Millisecond))
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.env
}

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(shared.cleanups) - 1; i >= 0; i-- {
		shared.cleanups[i]()
	}
	os.Exit(code)
}

func setUpCluster(cfg clickhousex.Config) (*clusterEnv, error) {
	ctx := context.Background()
	// The test's connections skip the profile check (TestClusterProfileIsChecked covers it) and
	// name the settings the test relies on itself.
	plain := cfg
	plain.Cluster = ""
	srv, err := clickhousex.OpenServer(ctx, plain)
	if err != nil {
		return nil, err
	}
	shared.cleanups = append(shared.cleanups, func() {
		if err := srv.Exec(context.Background(), "DROP DATABASE IF EXISTS "+cfg.Database+" ON CLUSTER "+cfg.Cluster); err != nil {
			fmt.Fprintf(os.Stderr, "drop %s: %v\n", cfg.Database, err)
		}
		_ = srv.Close()
	})
	closeLater := func(c driver.Conn) { shared.cleanups = append(shared.cleanups, func() { _ = c.Close() }) }
	m := &Migrator{
		Server: srv, Database: cfg.Database, Cluster: cfg.Cluster, Locker: noLock{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB: func(ctx context.Context) (driver.Conn, error) {
			db, err := clickhousex.Open(ctx, plain)
			if err == nil {
				closeLater(db)
			}
			return db, err
		},
		Node: func(ctx context.Context, addr string) (driver.Conn, error) {
			c := plain
			c.Addr = addr
			return clickhousex.Open(ctx, c)
		},
	}
	if _, err := m.Run(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if again, err := m.Run(ctx); err != nil || len(again.Applied) != 0 {
		return nil, fmt.Errorf("second run applied %v, err %v", again.Applied, err)
	}
	e := &clusterEnv{cfg: cfg, nodes: map[string]driver.Conn{}}
	e.addrs = append([]string{cfg.Addr}, strings.Split(os.Getenv("STACK_CLICKHOUSE_NODES"), ",")...)
	for _, a := range e.addrs {
		c := plain
		c.Addr = a
		conn, err := clickhousex.Open(ctx, c)
		if err != nil {
			return nil, err
		}
		closeLater(conn)
		e.nodes[a] = conn
	}
	e.conn, err = clickhouse.Open(&clickhouse.Options{
		Addr: []string{cfg.Addr}, Protocol: clickhouse.Native, ReadTimeout: cfg.ReadTimeout,
		Auth:     clickhouse.Auth{Database: cfg.Database, Username: cfg.Username, Password: cfg.Password},
		Settings: clickhouse.Settings{"insert_distributed_sync": 1},
	})
	if err != nil {
		return nil, err
	}
	closeLater(e.conn)
	return e, nil
}

type noLock struct{}

func (noLock) Lock(context.Context, string, time.Duration) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}

func (e *clusterEnv) count(t *testing.T, conn driver.Conn, q string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (e *clusterEnv) exec(t *testing.T, q string) {
	t.Helper()
	if err := e.conn.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// strings of one column from one node's query.
func (e *clusterEnv) column(t *testing.T, conn driver.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// eventually polls until cond holds (replication is asynchronous) or a minute passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
