package reporting

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

// TestSyntheticLoad measures the store on a synthetic workspace of the benchmark's shape (50,000
// customers over 3 apps and 3 currencies, REPORTING_LOAD_TX transactions over three years) on the
// local ClickHouse. Run it by hand (`go test -run '^$' -bench SyntheticLoad -benchtime 1x
// ./query/reporting/`); `make bench-query` is the benchmark of record. Machines here are shared and noisy, so it prints a baseline query beside the timings, and
// ClickHouse's own CPU time per request (docs/REPORTING_PERFORMANCE.md).
func BenchmarkSyntheticLoad(b *testing.B) {
	var t testing.TB = b
	tx := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("REPORTING_LOAD_TX")); err == nil {
		tx = v
	}
	const customers = 50_000
	conn, cfg := loadDatabase(t, customers, tx)
	c := context.Background()
	var pid string
	if err := conn.QueryRow(c, "SELECT public_id FROM platform_customers WHERE app_id = 'app-1' AND customer_id = 'gid://shopify/Shop/1000001'").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if want := schemas.CustomerPublicID("app-1", "gid://shopify/Shop/1000001"); pid != want {
		t.Fatalf("public id %s, want %s", pid, want)
	}

	rec := &recorder{Conn: conn}
	sc := Scope{WorkspaceID: "ws", AppIDs: []string{"app-0", "app-1", "app-2"}}
	rng := Range{From: MustDate("2026-03-02"), To: MustDate("2026-03-31")}
	// Each target reads through its own connection, which logs its queries, so that ClickHouse's own
	// CPU time per request can be read from system.query_log afterwards. Every target is computed
	// each time (the cost after new data landed), except the "kept" ones, which go through the result
	// cache (the cost while the data stays the same).
	s, kept := New(rec, WithClock(reportingtest.Clock), WithResultCache(0)), New(rec, WithClock(reportingtest.Clock))
	cpu := cpuMeter{t: t, cfg: cfg, run: strconv.FormatInt(time.Now().UnixNano(), 36)}
	measure := func(name string, n int, f func() error) {
		rec.Conn = cpu.conn(name)
		var ds []time.Duration
		for i := 0; i < n+2; i++ {
			t0 := time.Now()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if i >= 2 { // two warm-ups
				ds = append(ds, time.Since(t0))
			}
		}
		slices.Sort(ds)
		logLine("%-34s p50 %6.1f ms  p90 %6.1f ms  min %6.1f ms", name, ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]), ms(ds[0]))
		cpu.targets = append(cpu.targets, name)
		cpu.requests[name] = n + 2
	}
	measure("baseline: count 13 months of tx", 20, func() error {
		var n uint64
		return s.conn.QueryRow(c, `SELECT count() FROM platform_transactions WHERE created_at >= toDateTime('2025-03-01 00:00:00')
AND gross_cents > 0`).Scan(&n)
	})
	var sum Summary
	measure("summary (30 days, 3 apps)", 20, func() (err error) {
		sum, err = s.Summary(c, Request{Scope: sc, Range: rng, CustomerScope: ScopeIncluded})
		return err
	})
	for _, cur := range sum.Currencies {
		b := sum.ByCurrency[cur]
		nrr, _ := json.Marshal(b.NetRevenueRetentionRate)
		logLine("  %s: MRR %d, paying %d, NRR %s", cur, b.MRRCents, b.PayingCustomers, nrr)
	}
	measure("metric mrr", 20, func() error {
		_, err := s.Metric(c, MetricMRR, Request{Scope: sc, Range: rng, CustomerScope: ScopeIncluded})
		return err
	})
	measure("kept: summary", 20, func() error {
		_, err := kept.Summary(c, Request{Scope: sc, Range: rng, CustomerScope: ScopeIncluded})
		return err
	})
	var page CustomerList
	measure("customers, first page of 50", 20, func() (err error) {
		page, err = s.Customers(c, ListRequest{Scope: sc, Range: rng, CustomerScope: ScopeIncluded, Limit: 50})
		return err
	})
	measure("customers, a page of 50 of one app", 20, func() error {
		_, err := s.Customers(c, ListRequest{Scope: Scope{WorkspaceID: "ws", AppIDs: []string{"app-1"}}, Range: rng,
			CustomerScope: ScopeIncluded, Limit: 50, Cursor: *page.NextCursor})
		return err
	})
	measure("kept: customers, first page", 20, func() error {
		_, err := kept.Customers(c, ListRequest{Scope: sc, Range: rng, CustomerScope: ScopeIncluded, Limit: 50})
		return err
	})
	id := page.Customers[7].ID
	measure("customer detail", 20, func() error {
		_, err := s.Customer(c, DetailRequest{Scope: sc, Ref: id, Range: rng})
		return err
	})
	cpu.report(conn)
	dumpQueries(t, rec)
}

// cpuMeter opens a connection per target whose queries ClickHouse logs under a client name of
// their own, and reports the server's CPU time (user + system) and rows read per request.
type cpuMeter struct {
	t        testing.TB
	cfg      clickhousex.Config
	run      string
	targets  []string
	requests map[string]int
}

func (m *cpuMeter) client(target string) string {
	return "reporting-load-" + m.run + "-" + strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return ' '
	}, target)), "-")
}

func (m *cpuMeter) conn(target string) driver.Conn {
	if m.requests == nil {
		m.requests = map[string]int{}
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{m.cfg.Addr},
		Auth:        clickhouse.Auth{Database: m.cfg.Database, Username: m.cfg.Username, Password: m.cfg.Password},
		Settings:    clickhouse.Settings{"log_queries": 1},
		ClientInfo:  clickhouse.ClientInfo{Products: []struct{ Name, Version string }{{Name: m.client(target), Version: "1"}}},
		ReadTimeout: m.cfg.ReadTimeout, MaxOpenConns: m.cfg.MaxOpenConns, MaxIdleConns: m.cfg.MaxOpenConns,
	})
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func (m *cpuMeter) report(conn driver.Conn) {
	c := context.Background()
	_ = conn.Exec(c, "SYSTEM FLUSH LOGS")
	for _, name := range m.targets {
		n := m.requests[name]
		var queries, rows, micros uint64
		err := conn.QueryRow(c, `SELECT count(), sum(read_rows),
    sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'UserTimeMicroseconds')] + ProfileEvents.Values[indexOf(ProfileEvents.Names, 'SystemTimeMicroseconds')])
FROM system.query_log WHERE type = 2 AND event_date >= yesterday() AND startsWith(client_name, ?)`, m.client(name)).Scan(&queries, &rows, &micros)
		if err != nil {
			logLine("%s: no query log: %v", name, err)
			continue
		}
		logLine("%-34s ClickHouse %5.1f ms CPU, %4.1f queries, %9d rows read per request", name, float64(micros)/1000/float64(n),
			float64(queries)/float64(n), rows/uint64(n))
	}
}

// loadDatabase is a migrated database holding the synthetic load. With REPORTING_LOAD_DB it is that
// database, kept after the test and loaded only when empty, so that queries can be studied with
// clickhouse-client; otherwise a fresh database dropped at the end.
func loadDatabase(t testing.TB, customers, tx int) (driver.Conn, clickhousex.Config) {
	c := context.Background()
	name := os.Getenv("REPORTING_LOAD_DB")
	if name == "" {
		db := pipeline.Migrated(t)
		fillLoad(t, db.Conn, customers, tx)
		return db.Conn, db.CH
	}
	cfg := testenv.ClickHouseConfig(t) // a scratch database, dropped at the end; ours is named
	cfg.Database = name
	rdb, rc := testenv.Redis(t)
	if _, err := bootstrap.Migrate(c, cfg, rdb, rc.KeyPrefix, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhousex.Open(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var n uint64
	if err := conn.QueryRow(c, "SELECT count() FROM platform_transactions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		fillLoad(t, conn, customers, tx)
	}
	return conn, cfg
}

func fillLoad(t testing.TB, conn driver.Conn, customers, tx int) {
	c := context.Background()
	start := time.Now()
	for _, q := range syntheticLoad(customers, tx) {
		if err := conn.Exec(c, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	// The landing consumer's customer days and observed usage days (migrations 0024, 0026), as it
	// would write them.
	if err := schemas.AllDays(c, conn, 1, "ws"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"platform_transactions", "platform_lifecycle_events", "platform_charges", "platform_customers",
		"reporting_customer_days", "reporting_observed_days", "reporting_customers", "reporting_charges", "reporting_events", "reporting_transactions", "reporting_payments",
		"reporting_charge_payments", "reporting_customer_payments", "reporting_charge_billing", "reporting_usage_transactions", "reporting_usage_charges", "reporting_usage_events", "reporting_usage_sales", "reporting_observed_usage"} {
		if err := conn.Exec(c, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			t.Fatal(err)
		}
	}
	logLine("loaded %d customers, %d transactions in %s", customers, tx, time.Since(start).Round(time.Millisecond))
}

// dumpQueries writes the recorded queries, arguments inlined, to REPORTING_LOAD_DUMP.
func dumpQueries(t testing.TB, rec *recorder) {
	path := os.Getenv("REPORTING_LOAD_DUMP")
	if path == "" {
		return
	}
	var b strings.Builder
	for q, args := range rec.queries {
		b.WriteString(inline(t, q, args...) + "\n;;\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logLine prints a line of a benchmark's report to stderr: benchmark logs are truncated.
func logLine(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// syntheticLoad is INSERT … SELECT statements of a synthetic workspace "ws". Customer n is in app
// n % 3 and pays in one of three currencies; it had a first plan (ended after 200 days) and has a
// second (active; annual for one customer in ten); one in ten uninstalled. Its transactions (one
// every 11 days from 2023-04-01) cycle subscription, usage, subscription, one-time, subscription,
// adjustment.
func syntheticLoad(customers, tx int) []string {
	const (
		shop     = `concat('gid://shopify/Shop/', toString(1000000 + n))`
		app      = `concat('app-', toString(n % 3))`
		currency = `arrayElement(['USD', 'EUR', 'GBP'], intDiv(n, 3) % 3 + 1)`
		t0       = `toDateTime('2023-01-01 00:00:00', 'UTC') + n * 1200`
	)
	perCustomer := tx / customers
	out := []string{
		fmt.Sprintf(`INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_id, shop_domain, shop_name, status,
report_excluded, first_installed_at, last_event_at, version, public_id)
SELECT 'ws', %[1]s, %[2]s, toString(n), concat('shop', toString(n), '.myshopify.com'), concat('Shop ', toString(n)),
    if(n %% 10 = 0, 'uninstalled', 'installed'), 0, %[3]s, toDateTime('2026-03-01 00:00:00', 'UTC'), 1,
    concat('cus_', lower(hex(substring(SHA256(concat(%[1]s, '\x1f', %[2]s)), 1, 10))))
FROM (SELECT number AS n FROM numbers(%[4]d))`, app, shop, t0, customers),
		fmt.Sprintf(`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at,
charge_id, charge_name, currency, synced_at)
SELECT 'ws', %[1]s, concat(toString(n), '-', toString(k), '-', toString(e)),
    arrayElement(['SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED', 'SUBSCRIPTION_CHARGE_CANCELED'], e + 1), %[2]s, '',
    %[3]s + k * 86400 * 200 + e * 60 + if(e = 2, 86400 * 200 - 120, 0), concat('gid://shopify/AppSubscription/', toString(n * 2 + k)), '', '',
    now()
FROM (SELECT number AS n, arrayJoin([0, 1]) AS k, arrayJoin([0, 1, 2]) AS e FROM numbers(%[4]d)) WHERE NOT (k = 1 AND e = 2)`,
			app, shop, t0, customers),
		fmt.Sprintf(`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at,
charge_id, charge_name, currency, synced_at)
SELECT 'ws', %[1]s, concat(toString(n), '-rel-', toString(e)), if(e = 0, 'RELATIONSHIP_INSTALLED', 'RELATIONSHIP_UNINSTALLED'), %[2]s, '',
    %[3]s + e * 86400 * 700, '', '', '', now()
FROM (SELECT number AS n, arrayJoin([0, 1]) AS e FROM numbers(%[4]d)) WHERE e = 0 OR n %% 10 = 0`, app, shop, t0, customers),
		// Usage charges arrive as events too; they make the event table larger, as in production.
		fmt.Sprintf(`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at,
charge_id, charge_name, amount_cents, currency, synced_at)
SELECT 'ws', %[1]s, concat(toString(n), '-usage-', toString(i)), 'USAGE_CHARGE_APPLIED', %[2]s, '',
    toDateTime('2024-01-01 00:00:00', 'UTC') + i * 86400 * 40 + n * 7, concat('gid://shopify/AppUsageRecord/', toString(n * 100 + i)), '', 250,
    %[3]s, now()
FROM (SELECT intDiv(number, 20) AS n, number %% 20 AS i FROM numbers(%[4]d))`, app, shop, currency, customers*20),
		fmt.Sprintf(`INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, description, amount_cents,
currency, occurred_at, synced_at)
SELECT 'ws', %[1]s, concat('gid://shopify/AppUsageRecord/', toString(n * 100 + i)), %[2]s, '', 'usage', 250, %[3]s,
    toDateTime('2024-01-01 00:00:00', 'UTC') + i * 86400 * 40 + n * 7, now()
FROM (SELECT intDiv(number, 20) AS n, number %% 20 AS i FROM numbers(%[4]d))`, app, shop, currency, customers*20),
		fmt.Sprintf(`INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)
SELECT 'ws', %[1]s, concat(toString(n), '-', toString(i)), %[2]s, arrayElement(['orders_synced', 'labels_printed'], i %% 2 + 1), 1 + i %% 5,
    toDateTime('2026-01-01 00:00:00', 'UTC') + i * 86400 * 4 + n, now()
FROM (SELECT intDiv(number, 20) AS n, number %% 20 AS i FROM numbers(%[3]d))`, app, shop, customers*20),
		// Charges last: they carry their state events and the customer's uninstalls, as the
		// derivation writes them (migration 0011), read back from the events above.
		fmt.Sprintf(`INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency,
billing_interval, status, test, trial_days, accepted_at, activated_at, ended_at, version, state_events, customer_uninstalls, states_derived)
SELECT workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status, test, trial_days,
    accepted_at, activated_at, ended_at, version, arraySort(states), arraySort(uninstalls), 1
FROM (
    SELECT * FROM (
        SELECT 'ws' AS workspace_id, %[1]s AS app_id, concat('gid://shopify/AppSubscription/', toString(n * 2 + k)) AS charge_id,
            %[2]s AS customer_id, 'subscription' AS kind, if(k = 0, 'Basic', 'Pro') AS name, if(k = 0, 1900, if(n %% 10 = 1, 49000, 4900)) AS amount_cents,
            %[3]s AS currency, '' AS billing_interval, if(k = 0, 'cancelled', if(n %% 10 = 0, 'cancelled', 'active')) AS status, 0 AS test,
            0 AS trial_days, %[4]s + k * 86400 * 200 AS accepted_at, %[4]s + k * 86400 * 200 + 60 AS activated_at,
            if(k = 0, %[4]s + 86400 * 200, NULL) AS ended_at, 1 AS version
        FROM (SELECT number AS n, arrayJoin([0, 1]) AS k FROM numbers(%[5]d))
    ) ANY LEFT JOIN (
        SELECT charge_id, groupArray(toUInt64(occurred_at) * 16 + %[6]s) AS states
        FROM platform_lifecycle_events WHERE workspace_id = 'ws' AND type LIKE 'SUBSCRIPTION_CHARGE_%%' GROUP BY charge_id
    ) USING charge_id
) ANY LEFT JOIN (
    SELECT customer_id, groupArray(occurred_at) AS uninstalls
    FROM platform_lifecycle_events WHERE workspace_id = 'ws' AND type = 'RELATIONSHIP_UNINSTALLED' GROUP BY customer_id
) USING customer_id`, app, shop, currency, t0, customers, chargeEventKindSQL),
		`INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)
SELECT 'ws', concat('app-', toString(a)), s, if(endsWith(s, ':start'), 'origin', 'c'),
    if(endsWith(s, ':start'), toDateTime('2023-01-01 00:00:00', 'UTC'), toDateTime('2026-03-31 05:10:00', 'UTC')), 1
FROM (SELECT number AS a, arrayJoin(['transactions', 'transactions:start', 'lifecycle_events', 'lifecycle_events:start']) AS s FROM numbers(3))`,
		`INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, version)
SELECT concat('r', toString(number)), 'ws', concat('app-', toString(number % 3)), 'schedule', 'succeeded',
    toDateTime('2026-03-31 05:00:00', 'UTC') - number * 3600, toDateTime('2026-03-31 05:10:00', 'UTC') - number * 3600, 1
FROM numbers(300)`,
	}
	// Transactions in chunks of 5,000 customers, so that no statement runs into the read timeout.
	for lo := 0; lo < customers; lo += 5000 {
		out = append(out, fmt.Sprintf(`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id, created_at,
currency, gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', %[1]s, concat('gid://partners/AppSale/', toString(cityHash64(n, i) %% 100000000000)),
    arrayElement(['subscription', 'usage', 'subscription', 'one_time', 'subscription', 'adjustment'], i %% 6 + 1), %[2]s, '',
    concat('gid://shopify/AppSubscription/', toString(n * 2 + if(i * 11 < 200, 0, 1))),
    toDateTime('2023-04-01 00:00:00', 'UTC') + i * 86400 * 11 + (n * 7919) %% (86400 * 11), %[3]s,
    if(i %% 6 = 5, -500, 4900), if(i %% 6 = 5, -75, 735), 142, if(i %% 6 = 5, -425, 4023),
    if(i %% 6 IN (0, 2, 4), if(n %% 10 = 1, 'annual', 'every_30_days'), ''), now()
FROM (SELECT %[6]d + intDiv(number, %[4]d) AS n, number %% %[4]d AS i FROM numbers(%[5]d))`, app, shop, currency, perCustomer,
			perCustomer*5000, lo))
	}
	return out
}
