package processors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/schemas"
)

type noRetentionLock struct{}

func (noRetentionLock) Lock(context.Context, string, time.Duration) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}

// TestClusterRetentionDropsLocalPartitions migrates a database on the local cluster (REVTRACK_CLUSTER_TESTS=1,
// `deploy/local/stack up --cluster`), writes old and recent browser events and upload rows through
// the Distributed tables, and applies retention: the old month is gone from every node's local
// tables, the recent one stays, and the old upload rows are scrubbed on every shard.
func TestClusterRetentionDropsLocalPartitions(t *testing.T) {
	if os.Getenv("REVTRACK_CLUSTER_TESTS") != "1" {
		t.Skip("cluster tests run with REVTRACK_CLUSTER_TESTS=1 against deploy/local/stack up --cluster")
	}
	ctx := context.Background()
	cfg := clickhousex.DefaultConfig()
	cfg.Addr, cfg.Username, cfg.Password = os.Getenv("REVTRACK_CLICKHOUSE_ADDR"), os.Getenv("REVTRACK_CLICKHOUSE_USERNAME"), os.Getenv("REVTRACK_CLICKHOUSE_PASSWORD")
	cfg.ReadTimeout = 3 * time.Minute
	cluster := os.Getenv("REVTRACK_CLICKHOUSE_CLUSTER")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	cfg.Database = "cluster_retention_" + hex.EncodeToString(b)
	srv, err := clickhousex.OpenServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Exec(context.Background(), "DROP DATABASE IF EXISTS "+cfg.Database+" ON CLUSTER "+cluster)
		_ = srv.Close()
	})
	var db driver.Conn
	t.Cleanup(func() {
		if db != nil {
			_ = db.Close()
		}
	})
	m := &schemas.Migrator{Server: srv, Database: cfg.Database, Cluster: cluster, Locker: noRetentionLock{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB: func(ctx context.Context) (driver.Conn, error) {
			var err error
			db, err = clickhousex.Open(ctx, cfg)
			return db, err
		},
		Node: func(ctx context.Context, addr string) (driver.Conn, error) {
			c := cfg
			c.Addr = addr
			return clickhousex.Open(ctx, c)
		}}
	if _, err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{cfg.Addr}, Protocol: clickhouse.Native, ReadTimeout: cfg.ReadTimeout,
		Auth:     clickhouse.Auth{Database: cfg.Database, Username: cfg.Username, Password: cfg.Password},
		Settings: clickhouse.Settings{"insert_distributed_sync": 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at)
SELECT concat('e', toString(number)), 'src', 'ws', 'app', concat('acq-', toString(number % 16)), 'page_view',
    if(number % 2 = 0, toDateTime('2025-03-14 08:00:00'), toDateTime('2026-11-01 08:00:00')), now()
FROM system.numbers LIMIT 64`,
		`INSERT INTO upload_queue (row_id, workspace_id, mapping_id, source_id, acquisition_id, click_id_type, click_id, status,
    created_at, updated_at, version)
SELECT concat('row-', toString(number)), 'ws', 'map', 'src', 'acq', 'gclid', 'g', 'queued',
    if(number % 2 = 0, toDateTime('2025-03-14 08:00:00'), toDateTime('2026-11-01 08:00:00')), now(), 1
FROM system.numbers LIMIT 16`,
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rep, err := RunClusterRetention(ctx, conn, now, RetentionCluster{Name: cluster, Database: cfg.Database,
		Node: func(ctx context.Context, addr string) (RetentionNode, error) {
			c := cfg
			c.Addr = addr
			return clickhousex.Open(ctx, c)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Dropped, " "); !strings.Contains(got, "browser_events/202503") || !strings.Contains(got, "acquisitions/202503") ||
		strings.Contains(got, "202611") || rep.Scrubbed != 8 {
		t.Fatalf("report %+v: want the March 2025 partitions dropped and 8 upload rows scrubbed", rep)
	}
	nodes := append([]string{cfg.Addr}, strings.Split(os.Getenv("STACK_CLICKHOUSE_NODES"), ",")...)
	for _, a := range nodes {
		c := cfg
		c.Addr = a
		node, err := clickhousex.Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "node "+a+" without the old month and with its upload rows scrubbed", func() bool {
			var old, recent, unscrubbed uint64
			_ = node.QueryRow(ctx, "SELECT countIf(toYYYYMM(occurred_at) = 202503), countIf(toYYYYMM(occurred_at) = 202611) FROM browser_events_local").Scan(&old, &recent)
			_ = node.QueryRow(ctx, "SELECT count() FROM upload_queue_local WHERE created_at < '2026-01-01 00:00:00' AND click_id != ''").Scan(&unscrubbed)
			return old == 0 && recent > 0 && unscrubbed == 0
		})
		_ = node.Close()
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
