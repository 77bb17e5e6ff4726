package reportingbackfill_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// history inserts the rows numbered from to n-1 into every source table: two workspaces, two
// apps, months, and a second, later-synced copy of every tenth row (a re-sync).
func history(t *testing.T, conn driver.Conn, from, n int) {
	t.Helper()
	if err := insertHistory(testenv.Ctx(t), conn, from, n); err != nil {
		t.Fatal(err)
	}
}

func insertHistory(ctx context.Context, conn driver.Conn, from, n int) error {
	const (
		ws   = "if(number % 3 = 0, 'ws-b', 'ws-a')"
		app  = "concat('app-', toString(number % 2))"
		shop = "concat('gid://shopify/Shop/', toString(number % 97))"
		at   = "toDateTime('2024-01-01 00:00:00', 'UTC') + number * 1999"
	)
	synced := func(resync bool) string {
		if resync {
			return "toDateTime('2026-02-01 00:00:00', 'UTC')"
		}
		return "toDateTime('2026-01-01 00:00:00', 'UTC')"
	}
	for _, resync := range []bool{false, true} {
		where := fmt.Sprintf("WHERE number >= %d", from)
		if resync {
			where += " AND number % 10 = 0"
		}
		nums := fmt.Sprintf("FROM numbers(%d) %s", n, where)
		for _, q := range []string{
			`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at,
charge_id, charge_type, charge_name, amount_cents, currency, test, billing_on, shop_name, synced_at)
SELECT ` + ws + `, ` + app + `, hex(MD5(toString(number))), 'SUBSCRIPTION_CHARGE_ACTIVATED', ` + shop + `, 'd.myshopify.com', ` + at + `,
concat('gid://shopify/AppSubscription/', toString(number % 331)), 'AppSubscription', 'Basic', toNullable(toInt64(999)), 'USD',
toUInt8(number % 7 = 0), CAST(NULL AS Nullable(DateTime('UTC'))), 'Shop', ` + synced(resync) + ` ` + nums,
			`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id,
created_at, currency, gross_cents, platform_fee_cents, net_cents, billing_interval, synced_at)
SELECT ` + ws + `, ` + app + `, concat('gid://partners/Sale/', toString(number)), arrayElement(['subscription', 'usage', 'one_time'], intDiv(number, 3) % 3 + 1),
` + shop + `, 'd.myshopify.com', if(number % 5 = 0, '', concat('gid://shopify/AppSubscription/', toString(number % 331))), ` + at + `,
'USD', toInt64(number % 11) - 1, 0, toInt64(number % 11) - 1, arrayElement(['', 'every_30_days', 'annual'], number % 3 + 1), ` + synced(resync) + ` ` + nums,
			`INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, description, amount_cents,
currency, occurred_at, test, synced_at)
SELECT ` + ws + `, ` + app + `, concat('gid://shopify/AppUsageRecord/', toString(number)), ` + shop + `, '', '3 orders', 30, 'USD', ` + at + `,
toUInt8(number % 9 = 0), ` + synced(resync) + ` ` + nums,
			`INSERT INTO platform_customers (workspace_id, app_id, customer_id, public_id, shop_id, shop_domain, shop_name, status,
first_installed_at, last_event_at, version)
SELECT ` + ws + `, ` + app + `, concat('gid://shopify/Shop/', toString(number)), '', '', 'd.myshopify.com', 'Shop', 'installed',
toNullable(` + at + `), CAST(NULL AS Nullable(DateTime('UTC'))), toUInt64(toUnixTimestamp(` + synced(resync) + `)) ` + nums,
			`INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency,
billing_interval, status, state_events, customer_uninstalls, states_derived, version)
SELECT ` + ws + `, ` + app + `, concat('gid://shopify/AppSubscription/', toString(number)), ` + shop + `, 'subscription', 'Basic', 999,
'USD', 'every_30_days', 'active', [toUInt64(number * 16 + 2)], [` + at + `], 1, toUInt64(toUnixTimestamp(` + synced(resync) + `)) ` + nums,
		} {
			if err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%w\n%s", err, q)
			}
		}
	}
	return nil
}

// forget empties every copy and the record of complete copies: the state of a database whose
// copies were created after its history landed.
func forget(t *testing.T, conn driver.Conn, copies []schemas.Copy) {
	t.Helper()
	for _, c := range copies {
		if err := conn.Exec(testenv.Ctx(t), "TRUNCATE TABLE "+c.Table); err != nil {
			t.Fatal(err)
		}
	}
	for _, days := range []string{schemas.CustomerDaysTable, schemas.ObservedDaysTable, schemas.ChargeFactsTable} {
		if err := conn.Exec(testenv.Ctx(t), "TRUNCATE TABLE "+days); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Exec(testenv.Ctx(t), "TRUNCATE TABLE "+schemas.CopyBackfillsTable); err != nil {
		t.Fatal(err)
	}
}

// state is a copy compared with its source.
type state struct {
	rows     uint64 // rows of the copy, duplicates included
	keys     uint64 // distinct sorting keys in the copy
	want     uint64 // distinct sorting keys the view makes of the source
	missing  uint64 // source rows whose key the copy lacks
	outdated uint64 // keys whose latest version differs between the copy and the source
	final    uint64 // rows of the copy with FINAL
}

func (s state) complete() bool {
	return s.keys == s.want && s.final == s.want && s.missing == 0 && s.outdated == 0
}

// compare reads a copy and what its view makes of the source.
func compare(t *testing.T, conn driver.Conn, c schemas.Copy) state {
	t.Helper()
	key := strings.Join(c.Key, ", ")
	outdated := "toUInt64(0)"
	if c.Version != "" {
		latest := "SELECT " + key + ", max(" + c.Version + ") AS latest FROM %s GROUP BY " + key
		outdated = fmt.Sprintf("(SELECT count() FROM ("+latest+") WHERE (%s, latest) NOT IN ("+latest+"))", "("+c.Select+")", key, c.Table)
	}
	var s state
	q := fmt.Sprintf(`SELECT (SELECT count() FROM %[1]s), (SELECT uniqExact(%[2]s) FROM %[1]s), (SELECT uniqExact(%[2]s) FROM (%[3]s)),
(SELECT count() FROM (%[3]s) WHERE (%[2]s) NOT IN (SELECT %[2]s FROM %[1]s)), %[4]s, (SELECT count() FROM %[1]s FINAL)`,
		c.Table, key, c.Select, outdated)
	if err := conn.QueryRow(testenv.Ctx(t), q).Scan(&s.rows, &s.keys, &s.want, &s.missing, &s.outdated, &s.final); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return s
}

func copiesOf(t *testing.T) []schemas.Copy {
	t.Helper()
	cs, err := schemas.Copies()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func recorded(t *testing.T, conn driver.Conn) map[string]bool {
	t.Helper()
	r, err := reportingbackfill.Recorded(testenv.Ctx(t), conn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every materialized view of the migrations is a copy the backfill can handle, read from the
// migrations' own text.
func TestCopiesOfTheMigrations(t *testing.T) {
	byTable := map[string]schemas.Copy{}
	for _, c := range copiesOf(t) {
		if len(c.Key) < 2 || c.Bucket == "" || !strings.HasPrefix(c.Select, "SELECT ") || !strings.Contains(c.Select, "FROM "+c.Source) {
			t.Errorf("%+v", c)
		}
		byTable[c.Table] = c
	}
	ev := byTable["reporting_events"]
	if ev.Source != "platform_lifecycle_events" || ev.Month != "occurred_at" || ev.Bucket != "event_key" || ev.Version != "synced_at" ||
		strings.Join(ev.Key, ",") != "workspace_id,app_id,public_id,occurred_at,event_key" || ev.Filter != "" {
		t.Errorf("reporting_events: %+v", ev)
	}
	pay := byTable["reporting_payments"]
	if pay.Source != "platform_transactions" || pay.Version != "" || pay.Filter != "type = 'subscription' AND gross_cents > 0" ||
		!strings.HasSuffix(pay.SelectWhere("x = 1"), "FROM platform_transactions\nWHERE (type = 'subscription' AND gross_cents > 0) AND x = 1") {
		t.Errorf("reporting_payments: %+v", pay)
	}
	cus := byTable["reporting_customers"]
	if cus.Month != "" || cus.Bucket != "customer_id" || !strings.HasSuffix(cus.SelectWhere("x = 1"), "FROM platform_customers\nWHERE x = 1") {
		t.Errorf("reporting_customers: %+v", cus)
	}
	for _, table := range []string{"platform_events_by_customer", "platform_subscription_sales_by_customer"} {
		if _, ok := byTable[table]; !ok {
			t.Errorf("%s is not a copy", table)
		}
	}
}

// A database whose copies were created after its history: a dry run writes nothing; a run copies
// every part once, after which each copy holds what its view makes of the source, and is recorded
// complete; a second run copies nothing.
func TestBackfill(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	// Three runs over every copy: longer than testenv.Ctx's minute on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	copies := copiesOf(t)
	history(t, conn, 0, 6000)
	forget(t, conn, copies)

	var out bytes.Buffer
	res, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{DryRun: true, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range copies {
		if s := compare(t, conn, c); s.rows != 0 {
			t.Errorf("dry run wrote %d rows into %s", s.rows, c.Table)
		}
	}
	if r := recorded(t, conn); len(r) != 0 {
		t.Errorf("dry run recorded %v", r)
	}
	dayCopies := map[string]bool{}
	for _, c := range copies {
		dayCopies[c.Table] = reportingbackfill.CopiesDayTable(c)
	}
	for _, cr := range res.Copies {
		// A dry run recomputes no day, so a copy of a day table (the usage days, the fine-granule
		// copies: their sources are empty until the days are recomputed) has nothing to copy.
		if cr.Table != "reporting_usage_events" && !dayCopies[cr.Table] && (cr.Copied == 0 || cr.Missing == 0) {
			t.Errorf("dry run found nothing to copy into %s: %+v", cr.Table, cr)
		}
	}
	if !strings.Contains(out.String(), " lacks ") {
		t.Errorf("dry run output:\n%s", out.String())
	}

	out.Reset()
	if _, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Out: &out}); err != nil {
		t.Fatal(err)
	}
	t.Logf("first run:\n%s", out.String())
	rows := map[string]uint64{}
	for _, c := range copies {
		s := compare(t, conn, c)
		if !s.complete() {
			t.Errorf("%s after the backfill: %+v", c.Table, s)
		}
		if c.Table != "reporting_usage_events" && s.rows == 0 {
			t.Errorf("%s: nothing copied", c.Table)
		}
		rows[c.Table] = s.rows
	}
	if r := recorded(t, conn); len(r) != len(copies)+5 || !r["acquisition_clicks"] || !r["acquisition_touches"] || !r[schemas.CustomerDaysTable] || !r[schemas.ObservedDaysTable] || !r[schemas.ChargeFactsTable] { // no browser events: nothing to summarise
		t.Errorf("recorded complete: %v, want all %d copies, acquisition_clicks, acquisition_touches and the customer days", r, len(copies))
	}
	daysAgree(t, conn, "ws-a", "ws-b")

	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range res.Copies {
		if cr.Copied != 0 || cr.Complete != cr.Parts || !cr.Recorded {
			t.Errorf("second run, %s: %+v", cr.Table, cr)
		}
	}
	for _, c := range copies {
		// The second run recomputed every day again, which a copy of a day table receives through
		// its view: more rows, the same keys.
		if s := compare(t, conn, c); (s.rows != rows[c.Table] && !reportingbackfill.CopiesDayTable(c)) || !s.complete() {
			t.Errorf("%s after the second run: %+v, had %d rows", c.Table, s, rows[c.Table])
		}
	}
}

// An interrupted backfill (here: one workspace, then parts split into many statements) leaves
// parts complete that the next run skips; a workspace run records nothing.
func TestBackfillResumes(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	// Two backfills, the second in statements of 50 rows: longer than testenv.Ctx's minute on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	copies := copiesOf(t)
	history(t, conn, 0, 3000)
	forget(t, conn, copies)

	first, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{WorkspaceID: "ws-a"})
	if err != nil {
		t.Fatal(err)
	}
	if r := recorded(t, conn); len(r) != 0 {
		t.Errorf("a workspace's backfill recorded %v", r)
	}
	dayCopies := map[string]bool{}
	for _, c := range copies {
		dayCopies[c.Table] = reportingbackfill.CopiesDayTable(c)
	}
	second, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{ChunkRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i, cr := range second.Copies {
		a := first.Copies[i]
		// A copy of a day table (the usage days, the fine-granule copies) receives a workspace's rows
		// through its view when the days are recomputed, and has nothing left to copy.
		if cr.Table == "reporting_usage_events" || dayCopies[cr.Table] {
			continue
		}
		// The first run copied ws-a's parts; the second finds them complete and copies ws-b's.
		if a.Copied == 0 || cr.Complete < a.Copied || cr.Copied == 0 || cr.Copied > cr.Parts-a.Parts || !cr.Recorded {
			t.Errorf("%s: first run %+v, second %+v", cr.Table, a, cr)
		}
	}
	for _, c := range copies {
		if s := compare(t, conn, c); !s.complete() {
			t.Errorf("%s: %+v", c.Table, s)
		}
	}
}

// Rows keep landing while the backfill runs: the views copy them, the backfill copies the history,
// and every copy ends complete.
func TestBackfillWhileLanding(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	copies := copiesOf(t)
	history(t, conn, 0, 4000)
	forget(t, conn, copies)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 4; i++ {
			if err := insertHistory(ctx, conn, 4000*i, 4000*(i+1)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	if _, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{ChunkRows: 700}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, c := range copies {
		if s := compare(t, conn, c); !s.complete() {
			t.Errorf("%s: %+v", c.Table, s)
		}
	}
}

// After the migrations: copies of empty sources are recorded complete, empty copies of sources
// with rows are backfilled, and a copy that holds some rows is left to the command, with a warning.
func TestAuto(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	copies := copiesOf(t)
	if r := recorded(t, conn); len(r) != len(copies)+5 || !r["acquisition_clicks"] || !r["acquisition_touches"] || !r[schemas.CustomerDaysTable] || !r[schemas.ObservedDaysTable] || !r[schemas.ChargeFactsTable] {
		t.Fatalf("a fresh database has %v recorded, want every copy, acquisition_clicks, acquisition_touches and the customer days", r)
	}
	history(t, conn, 0, 2000)
	forget(t, conn, copies)
	// One copy holds a row landed after its view existed, not the history.
	if err := conn.Exec(ctx, "INSERT INTO "+copies[0].Table+" SELECT * FROM ("+copies[0].Select+" LIMIT 1)"); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if err := reportingbackfill.Auto(ctx, conn, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	r := recorded(t, conn)
	for _, c := range copies {
		s := compare(t, conn, c)
		switch c.Table {
		case "reporting_customers":
			if r[c.Table] || s.complete() || !strings.Contains(logs.String(), "copy=reporting_customers") {
				t.Errorf("%s: recorded %v, %+v\n%s", c.Table, r[c.Table], s, logs.String())
			}
		default:
			if !r[c.Table] || !s.complete() {
				t.Errorf("%s: recorded %v, %+v", c.Table, r[c.Table], s)
			}
		}
	}
	// The customer days were empty while transactions existed: filled from them, recorded.
	if !r[schemas.CustomerDaysTable] || !r[schemas.ObservedDaysTable] || !r[schemas.ChargeFactsTable] {
		t.Errorf("the day tables were not recorded complete:\n%s", logs.String())
	}
	daysAgree(t, conn, "ws-a", "ws-b")
	if err := reportingbackfill.Auto(ctx, conn, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{"reporting_customers"}}); err != nil {
		t.Fatal(err)
	}
	if s := compare(t, conn, copies[0]); copies[0].Table != "reporting_customers" || !s.complete() || !recorded(t, conn)["reporting_customers"] {
		t.Errorf("%s after the command: %+v", copies[0].Table, s)
	}
}

// daysAgree checks that the customer days of each workspace are what platform_transactions says.
func daysAgree(t *testing.T, conn driver.Conn, workspaces ...string) {
	t.Helper()
	for _, ws := range workspaces {
		var n uint64
		if err := conn.QueryRow(testenv.Ctx(t), schemas.CustomerDaysMismatches, ws, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d customer-day rows differ from platform_transactions", ws, n)
		}
		if err := conn.QueryRow(testenv.Ctx(t), schemas.UsageDaysMismatches, ws, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d usage-day rows differ from the customer days with a usage sale", ws, n)
		}
		if err := conn.QueryRow(testenv.Ctx(t), schemas.ObservedDaysMismatches, ws, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d observed usage day rows differ from platform_usage_charges", ws, n)
		}
		var charges uint64
		if err := conn.QueryRow(testenv.Ctx(t), `SELECT count() FROM reporting_charges FINAL
WHERE workspace_id = ? AND kind = 'subscription' AND test = 0`, ws).Scan(&charges); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(testenv.Ctx(t), schemas.ChargeFactsMismatches, ws, 0, ws, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 || charges == 0 {
			t.Errorf("%s: %d charge fact rows differ from the charges and their payments (%d charges)", ws, n, charges)
		}
	}
}
