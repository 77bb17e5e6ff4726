package schemas

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// shards returns one connection per shard (its first node in e.addrs) and every node's shard.
func (e *clusterEnv) shards(t *testing.T) (first map[string]driver.Conn, shardOf map[string]string) {
	t.Helper()
	first, shardOf = map[string]driver.Conn{}, map[string]string{}
	for _, a := range e.addrs {
		s := e.column(t, e.nodes[a], "SELECT substitution FROM system.macros WHERE macro = 'shard'")
		if len(s) != 1 {
			t.Fatalf("node %s has no shard macro", a)
		}
		shardOf[a] = s[0]
		if _, ok := first[s[0]]; !ok {
			first[s[0]] = e.nodes[a]
		}
	}
	if len(first) < 2 {
		t.Fatalf("want at least 2 shards, found %v", shardOf)
	}
	return first, shardOf
}

// TestClusterMigrateCreatesShardedTables: every node has the local replicated tables, the
// Distributed tables under today's names, the tables kept whole, the views, and the columns the
// ALTER migrations added (through the Distributed table too).
func TestClusterMigrateCreatesShardedTables(t *testing.T) {
	e := newClusterEnv(t)
	db := e.cfg.Database
	for _, a := range e.addrs {
		engines := map[string]string{}
		rows, err := e.nodes[a].Query(context.Background(), "SELECT name, engine FROM system.tables WHERE database = ?", db)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n, en string
			if err := rows.Scan(&n, &en); err != nil {
				t.Fatal(err)
			}
			engines[n] = en
		}
		rows.Close()
		for name, want := range map[string]string{
			"browser_events": "Distributed", "browser_events_local": "ReplicatedReplacingMergeTree",
			"acquisitions_local": "ReplicatedAggregatingMergeTree", "audit_log_local": "ReplicatedMergeTree",
			"workspaces": "ReplicatedReplacingMergeTree", migrationsTable: "ReplicatedReplacingMergeTree",
			"acquisitions_mv": "MaterializedView", "analyst_customer_attribution": "View",
		} {
			if engines[name] != want {
				t.Errorf("node %s: %s is %q, want %s", a, name, engines[name], want)
			}
		}
	}
	for _, q := range []string{
		"SELECT scope FROM api_keys LIMIT 0", "SELECT request_events FROM upload_queue LIMIT 0",
		"SELECT end_reason, states_derived FROM platform_charges LIMIT 0", "SELECT disabled_cause FROM ad_mappings LIMIT 0",
		"SELECT count() FROM analyst_customer_attribution", "SELECT count() FROM analyst_customers",
		"SELECT count() FROM analyst_customer_mrr_daily", "SELECT count() FROM analyst_daily_revenue",
	} {
		rows, err := e.conn.Query(context.Background(), q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rows.Close()
	}
}

// TestClusterReinsertCollapsesOnOneShard inserts browser events and platform transactions through
// the Distributed tables, inserts them all again (a redelivery, later received), and checks that
// every row and its duplicate landed on one shard, spread over both, that FINAL through the
// Distributed table counts each once, that each materialized view's rows sit on the shard of the
// rows they came from, and that the other replica of each shard catches up.
func TestClusterReinsertCollapsesOnOneShard(t *testing.T) {
	e := newClusterEnv(t)
	const events, browsers = 400, 40
	browserInsert := func(received string) string {
		return fmt.Sprintf(`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, session_id, name,
    occurred_at, received_at, first_utm_source)
SELECT concat('evt-', toString(number)), 'src-1', 'ws-1', 'app-1', concat('acq-', toString(number %% %d)), 's', 'page_view',
    toDateTime('2026-11-01 00:00:00') + number, toDateTime('%s'), concat('utm-', toString(number %% %d))
FROM system.numbers LIMIT %d`, browsers, received, browsers, events)
	}
	e.exec(t, browserInsert("2026-11-02 00:00:00"))
	e.exec(t, browserInsert("2026-11-03 00:00:00"))
	const sales, customers = 300, 30
	salesInsert := func(synced string) string {
		return fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, charge_id,
    created_at, currency, gross_cents, platform_fee_cents, net_cents, synced_at)
SELECT 'ws-1', 'app-1', concat('tx-', toString(number)), 'usage', concat('cust-', toString(number %% %d)), '',
    toDateTime('2026-11-01 00:00:00') + number * 60, 'USD', 1000, 200, 800, toDateTime('%s')
FROM system.numbers LIMIT %d`, customers, synced, sales)
	}
	e.exec(t, salesInsert("2026-11-02 00:00:00"))
	e.exec(t, salesInsert("2026-11-03 00:00:00"))

	if n := e.count(t, e.conn, "SELECT count() FROM browser_events WHERE source_id = 'src-1'"); n != 2*events {
		t.Fatalf("browser_events holds %d rows, want %d before merging", n, 2*events)
	}
	if n := e.count(t, e.conn, "SELECT count() FROM browser_events FINAL WHERE source_id = 'src-1'"); n != events {
		t.Errorf("browser_events FINAL: %d rows, want %d", n, events)
	}
	if n := e.count(t, e.conn, "SELECT count() FROM platform_transactions FINAL WHERE workspace_id = 'ws-1'"); n != sales {
		t.Errorf("platform_transactions FINAL: %d rows, want %d", n, sales)
	}
	if n := e.count(t, e.conn, "SELECT count() FROM reporting_transactions FINAL WHERE workspace_id = 'ws-1'"); n != sales {
		t.Errorf("reporting_transactions FINAL: %d rows, want %d", n, sales)
	}
	if n := e.count(t, e.conn, "SELECT sum(e) FROM (SELECT uniqExactMerge(events) AS e FROM acquisitions WHERE source_id = 'src-1' GROUP BY source_id, acquisition_id)"); n != events {
		t.Errorf("acquisitions count %d events, want %d", n, events)
	}

	first, _ := e.shards(t)
	for _, c := range []struct{ table, key, view, viewKey, where string }{
		{"browser_events_local", "event_id", "acquisitions_local", "acquisition_id", " WHERE source_id = 'src-1'"},
		{"platform_transactions_local", "transaction_id", "reporting_transactions_local", "transaction_id", " WHERE workspace_id = 'ws-1'"},
	} {
		// A Distributed insert writes one replica of each shard, not always the first: wait until
		// both inserts have replicated to the replicas read below.
		total := map[string]uint64{"browser_events_local": 2 * events, "platform_transactions_local": 2 * sales}[c.table]
		eventually(t, c.table+" on the first replicas", func() bool {
			var n uint64
			for _, conn := range first {
				n += e.count(t, conn, "SELECT count() FROM "+c.table+c.where)
			}
			return n == total
		})
		where := map[string]string{} // key: shard
		seen := 0
		for shard, conn := range first {
			keys := e.column(t, conn, "SELECT "+c.key+" FROM "+c.table+c.where+" GROUP BY "+c.key+" HAVING count() = 2")
			if all := e.count(t, conn, "SELECT uniqExact("+c.key+") FROM "+c.table+c.where); all != uint64(len(keys)) {
				t.Errorf("shard %s: %d of %d keys of %s without their duplicate", shard, all-uint64(len(keys)), all, c.table)
			}
			if len(keys) == 0 {
				t.Errorf("shard %s holds no row of %s: the key does not spread", shard, c.table)
			}
			for _, k := range keys {
				if other, ok := where[k]; ok {
					t.Fatalf("%s %s on shards %s and %s", c.table, k, other, shard)
				}
				where[k] = shard
			}
			seen += len(keys)
		}
		if want := map[string]int{"browser_events_local": events, "platform_transactions_local": sales}[c.table]; seen != want {
			t.Errorf("%s: %d keys over the shards, want %d", c.table, seen, want)
		}
		// Each view row is on the shard of its source rows.
		srcKey := map[string]string{"acquisition_id": "acquisition_id", "transaction_id": "transaction_id"}[c.viewKey]
		// The view's rows replicate apart from their source's, so this is waited for too.
		eventually(t, c.view+" holding, on each shard, the keys of its source rows there", func() bool {
			for _, conn := range first {
				local := e.column(t, conn, "SELECT DISTINCT "+c.viewKey+" FROM "+c.view+c.where)
				source := e.column(t, conn, "SELECT DISTINCT "+srcKey+" FROM "+c.table+c.where)
				sort.Strings(local)
				sort.Strings(source)
				if fmt.Sprint(local) != fmt.Sprint(source) {
					return false
				}
			}
			return true
		})
	}

	// Each node ends up with its shard's rows.
	_, shardOf := e.shards(t)
	for _, a := range e.addrs {
		want := e.count(t, first[shardOf[a]], "SELECT count() FROM browser_events_local")
		eventually(t, "replica "+a+" catching up", func() bool {
			return e.count(t, e.nodes[a], "SELECT count() FROM browser_events_local") == want
		})
	}
}
