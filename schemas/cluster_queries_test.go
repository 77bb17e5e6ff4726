package schemas

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestClusterSubqueriesFollowTheirUnits shows on data why deploy/README.md asks for
// distributed_product_mode = 'global': a subquery over a table sharded by another unit than the
// outer table's (funnel events by event, acquisitions by browser, as attribution compares them)
// finds only its own shard's half when it runs locally, and everything when it is GLOBAL; a
// subquery over a table of the same unit (a customer's transactions against the customers) gives
// the same answer either way.
func TestClusterSubqueriesFollowTheirUnits(t *testing.T) {
	e := newClusterEnv(t)
	const browsers = 200
	e.exec(t, `INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at)
SELECT concat('b', toString(number)), 'src', 'ws', 'app', concat('acq-', toString(number)), 'page_view',
    toDateTime('2026-11-01 00:00:00'), now()
FROM system.numbers LIMIT 200`)
	e.exec(t, `INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, acquisition_source_id,
    acquisition_id, acquisition_resolved_by, version)
SELECT 'ws', 'src', 'app', concat('f', toString(number)), 'install', toDateTime('2026-11-01 00:00:00'), 'src',
    concat('acq-', toString(number)), 'event', 1
FROM system.numbers LIMIT 200`)
	touched := func(mode string) uint64 {
		return e.count(t, e.conn, `SELECT uniqExact(acquisition_id) FROM acquisitions
PREWHERE acquisition_id IN (SELECT acquisition_id FROM funnel_events WHERE source_id = 'src' AND name = 'install')
WHERE source_id = 'src'
SETTINGS distributed_product_mode = '`+mode+`'`)
	}
	if n := touched("global"); n != browsers {
		t.Errorf("GLOBAL: %d acquisitions with an install, want %d", n, browsers)
	}
	if n := touched("local"); n >= browsers {
		t.Errorf("local: %d acquisitions with an install; a subquery of another unit should miss the other shard's", n)
	}

	e.exec(t, `INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, charge_id, created_at,
    currency, gross_cents, platform_fee_cents, net_cents, synced_at)
SELECT 'ws', 'app', concat('tx-', toString(number)), 'subscription', concat('c', toString(number % 50)), concat('ch-', toString(number % 50)),
    toDateTime('2026-11-01 00:00:00') + number, 'USD', 1000, 200, 800, now()
FROM system.numbers LIMIT 500`)
	e.exec(t, `INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_domain, status, report_excluded, version)
SELECT 'ws', 'app', concat('c', toString(number)), concat('shop', toString(number), '.example'), 'installed', 0, 1
FROM system.numbers LIMIT 50`)
	sameUnit := func(mode string) uint64 {
		return e.count(t, e.conn, `SELECT count() FROM reporting_transactions FINAL
WHERE workspace_id = 'ws' AND public_id IN (SELECT public_id FROM reporting_customers FINAL WHERE workspace_id = 'ws' AND shop_domain LIKE 'shop1%')
SETTINGS distributed_product_mode = '`+mode+`'`)
	}
	global, local := sameUnit("global"), sameUnit("local")
	if global == 0 || global != local {
		t.Errorf("same unit: GLOBAL finds %d transactions, local %d; want the same, non-zero", global, local)
	}
}

// TestClusterProfileIsChecked: a connection in cluster mode is refused unless the user's profile
// sets what deploy/README.md asks for, and the refusal says which setting is missing.
func TestClusterProfileIsChecked(t *testing.T) {
	cfg := testenv.ClusterClickHouse(t, "cluster_test_")
	cfg.Database = "default"
	plain := cfg
	plain.Cluster = ""
	node, err := clickhousex.Open(context.Background(), plain)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	var mode, balancing string
	rows, err := node.Query(context.Background(), "SELECT value FROM system.settings WHERE name IN ('distributed_product_mode', 'load_balancing') ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*string{&mode, &balancing} {
		if !rows.Next() {
			t.Fatal("system.settings lacks distributed_product_mode or load_balancing")
		}
		if err := rows.Scan(v); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	conn, err := clickhousex.Open(context.Background(), cfg)
	if mode == "global" && balancing == "in_order" {
		if err != nil {
			t.Fatalf("profile has the settings, yet: %v", err)
		}
		_ = conn.Close()
		return
	}
	if err == nil {
		_ = conn.Close()
		t.Fatalf("profile has distributed_product_mode %q and load_balancing %q, yet the cluster connection was accepted", mode, balancing)
	}
	if !strings.Contains(err.Error(), "distributed_product_mode") {
		t.Fatalf("refusal does not name the settings: %v", err)
	}
}

// TestClusterReappliedAddColumnIsForgiven: a migrator that died after a migration's ADD COLUMNs
// but before recording it runs them again; on the cluster the duplicate-column error comes back
// from one replica of each shard (the local tables) and from each node (the Distributed table),
// and counts as done like a single node's.
func TestClusterReappliedAddColumnIsForgiven(t *testing.T) {
	e := newClusterEnv(t)
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	m := &Migrator{Cluster: e.cfg.Cluster, Node: func(ctx context.Context, addr string) (driver.Conn, error) {
		c := e.cfg
		c.Addr, c.Cluster = addr, ""
		return clickhousex.Open(ctx, c)
	}}
	cl := Cluster{Name: e.cfg.Cluster, Database: e.cfg.Database}
	for _, mg := range ms {
		if mg.Version != 13 { // upload_queue's six columns: a sharded table
			continue
		}
		statements, err := clusterStatements(cl, mg)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range statements {
			// Run bare, each statement fails: the column is there.
			plain := strings.TrimPrefix(strings.TrimPrefix(st, EveryNode), EveryShard)
			if err := e.conn.Exec(context.Background(), plain); err == nil || !alreadyApplied(plain, err) {
				t.Errorf("%.90s: again gives %v, want a duplicate-column error", plain, err)
			}
			if err := m.exec(context.Background(), e.conn, st); err != nil {
				t.Errorf("%.90s: %v", st, err)
			}
		}
	}
	// Every node still runs ON CLUSTER statements: on 18.16 a duplicate column sent ON CLUSTER to
	// a replicated table stopped a node's DDL worker, and each later statement waited out its
	// timeout on that node.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	probe := e.cfg.Database + ".ddl_probe"
	if err := e.conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+probe+" ON CLUSTER "+e.cfg.Cluster+" (x UInt8) ENGINE = Memory"); err != nil {
		t.Fatalf("an ON CLUSTER statement after the re-applied columns: %v", err)
	}
	if err := e.conn.Exec(ctx, "DROP TABLE IF EXISTS "+probe+" ON CLUSTER "+e.cfg.Cluster); err != nil {
		t.Fatal(err)
	}
}
