package reportingbackfill

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/clustertest"
	"github.com/revtrack/revtrack/schemas"
)

// TestClusterBackfillPlacesRowsOnTheirSourceShard runs a copy's backfill on the local cluster
// (REVTRACK_CLUSTER_TESTS=1, `deploy/local/stack up --cluster`): transactions land, their copy is
// emptied (as if its view had come after them), and the backfill's INSERT … SELECT through the
// Distributed tables puts every row back, each on the shard of its source row, where the view
// would have written it.
func TestClusterBackfillPlacesRowsOnTheirSourceShard(t *testing.T) {
	ctx := context.Background()
	cfg := testenv.ClusterClickHouse(t, "cluster_backfill_")
	cluster := cfg.Cluster
	clustertest.Migrate(t, ctx, cfg)
	open := func(ctx context.Context, addr string) (driver.Conn, error) {
		c := cfg
		c.Addr = addr
		conn, err := clickhousex.Open(ctx, c)
		if err == nil {
			t.Cleanup(func() { _ = conn.Close() })
		}
		return conn, err
	}
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{cfg.Addr}, Protocol: clickhouse.Native, ReadTimeout: cfg.ReadTimeout,
		Auth:     clickhouse.Auth{Database: cfg.Database, Username: cfg.Username, Password: cfg.Password},
		Settings: clickhouse.Settings{"insert_distributed_sync": 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	count := func(c driver.Conn, q string) uint64 {
		t.Helper()
		var n uint64
		if err := c.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	const sales = 600
	if err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id,
    charge_id, created_at, currency, gross_cents, platform_fee_cents, net_cents, synced_at)
SELECT 'ws', if(number %% 2 = 0, 'app-a', 'app-b'), concat('tx-', toString(number)), 'usage', concat('c', toString(number %% 60)), '',
    toDateTime('2026-09-01 00:00:00') + number * 7200, 'USD', 1000, 200, 800, now()
FROM system.numbers LIMIT %d`, sales)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "ALTER TABLE "+cfg.Database+".reporting_transactions_local ON CLUSTER "+cluster+" DELETE WHERE 1 = 1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for count(conn, "SELECT count() FROM reporting_transactions") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the copy was not emptied")
		}
		time.Sleep(200 * time.Millisecond)
	}
	res, err := Run(ctx, conn, Options{Tables: []string{"reporting_transactions"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copies) != 1 || res.Copies[0].Missing != sales || !res.Copies[0].Recorded {
		t.Fatalf("backfill %+v: want %d rows copied and the copy recorded complete", res.Copies, sales)
	}
	if n := count(conn, "SELECT count() FROM reporting_transactions FINAL"); n != sales {
		t.Fatalf("copy holds %d rows, want %d", n, sales)
	}
	addrs, err := schemas.ClusterNodes(ctx, conn, cluster)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(c driver.Conn, table string) string {
		rows, err := c.Query(ctx, "SELECT DISTINCT transaction_id FROM "+table)
		if err != nil {
			t.Fatal(err)
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
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	for _, a := range addrs {
		node, err := open(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		src := ids(node, "platform_transactions_local")
		deadline := time.Now().Add(time.Minute)
		for ids(node, "reporting_transactions_local") != src {
			if time.Now().After(deadline) {
				t.Fatalf("node %s: the copy's rows are not those of its source's shard", a)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if src == "" {
			t.Errorf("node %s holds no transaction", a)
		}
	}
}
