package processors

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/clustertest"
)

// TestClusterRetentionDropsLocalPartitions migrates a database on the local cluster (REVTRACK_CLUSTER_TESTS=1,
// `deploy/local/stack up --cluster`), writes old and recent browser events and upload rows through
// the Distributed tables, and applies retention: the old month is gone from every node's local
// tables, the recent one stays, and the old upload rows are scrubbed on every shard.
func TestClusterRetentionDropsLocalPartitions(t *testing.T) {
	ctx := context.Background()
	cfg := testenv.ClusterClickHouse(t, "cluster_retention_")
	cluster := cfg.Cluster
	clustertest.Migrate(t, ctx, cfg)
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
