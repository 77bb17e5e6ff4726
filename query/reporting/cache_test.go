package reporting

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// countingConn counts the queries that read data, as opposed to the version read on system.parts
// that every request makes: a request that read none was answered with a kept response.
type countingConn struct {
	Conn
	reads atomic.Int64
}

func (c *countingConn) count(q string) {
	if q != selectDataVersion {
		c.reads.Add(1)
	}
}

func (c *countingConn) Query(ctx context.Context, q string, args ...any) (driver.Rows, error) {
	c.count(q)
	return c.Conn.Query(ctx, q, args...)
}

func (c *countingConn) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	c.count(q)
	return c.Conn.QueryRow(ctx, q, args...)
}

// A request marked WithNoCache (the REST edge's `Cache-Control: no-cache`) is computed even when a
// kept response is there, answers the same, and what it computed is kept for the next request.
func TestNoCacheComputesAndKeeps(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	conn := &countingConn{Conn: e.conn}
	s := New(conn, WithClock(reportingtest.Clock))
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}
	list := ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded, Limit: 3}
	for _, c := range []struct {
		name string
		get  func(context.Context) (any, error)
	}{
		{"summary", func(ctx context.Context) (any, error) { return s.Summary(ctx, req) }},
		{"metric mrr", func(ctx context.Context) (any, error) { return s.Metric(ctx, MetricMRR, req) }},
		{"metric usage", func(ctx context.Context) (any, error) { return s.Metric(ctx, MetricUsage, req) }},
		{"customers", func(ctx context.Context) (any, error) { return s.Customers(ctx, list) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			// call answers a request and says whether it read data (computed) or not (kept).
			call := func(ctx context.Context) (any, bool) {
				t.Helper()
				before := conn.reads.Load()
				v, err := c.get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return v, conn.reads.Load() > before
			}
			first, _ := call(ctx(t))
			kept, computed := call(ctx(t))
			if computed {
				t.Fatal("the second request was computed: nothing kept to bypass")
			}
			fresh, computed := call(WithNoCache(ctx(t)))
			if !computed {
				t.Fatal("a no-cache request was answered with the kept response")
			}
			jsonEq(t, "no-cache against kept", fresh, kept)
			jsonEq(t, "no-cache against first", fresh, first)
			again, computed := call(ctx(t))
			if computed {
				t.Fatal("the response the no-cache request computed was not kept")
			}
			jsonEq(t, "kept after no-cache", again, fresh)
		})
	}
}

// The version is still read on a no-cache request: what it keeps is labelled with the version read
// before its data, never after.
func TestNoCacheReadsTheVersionFirst(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	conn := &orderConn{Conn: e.conn}
	s := New(conn, WithClock(reportingtest.Clock))
	if _, err := s.Summary(WithNoCache(ctx(t)), Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}); err != nil {
		t.Fatal(err)
	}
	if len(conn.order) < 2 || conn.order[0] != selectDataVersion {
		t.Fatalf("first query %q of %d, want the version read", first(conn.order), len(conn.order))
	}
}

// orderConn records the order of the queries (the summary's run concurrently after the version).
type orderConn struct {
	Conn
	mu    sync.Mutex
	order []string
}

func (c *orderConn) add(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = append(c.order, q)
}

func (c *orderConn) Query(ctx context.Context, q string, args ...any) (driver.Rows, error) {
	c.add(q)
	return c.Conn.Query(ctx, q, args...)
}

func (c *orderConn) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	c.add(q)
	return c.Conn.QueryRow(ctx, q, args...)
}

func first(qs []string) string {
	if len(qs) == 0 {
		return ""
	}
	return strings.SplitN(qs[0], "\n", 2)[0]
}

// Background merges change no data, so they keep what was kept; a dropped partition and a
// mutation change it, so they discard it.
func TestKeptResponsesSurviveMergesNotDataChanges(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	// A second insert into every table, so that a merge has parts to join.
	e.fx.AddUsageCharge(reportingtest.UsageCharge{App: "app-1", ID: "ur-second", Shop: reportingtest.Shop("1001"), Charge: "sub-alpha",
		Amount: 300, Currency: "USD", At: "2026-03-29T09:00:00Z"})
	e.fx.Exclude("nobody.myshopify.com", "", true)
	e.fx.Flush(t)
	conn := &countingConn{Conn: e.conn}
	s := New(conn, WithClock(reportingtest.Clock))
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}
	summary := func() (Summary, bool) {
		t.Helper()
		before := conn.reads.Load()
		v, err := s.Summary(ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		return v, conn.reads.Load() > before
	}
	partNames := func() string {
		t.Helper()
		rows, err := e.conn.Query(ctx(t), "SELECT name FROM system.parts WHERE database = currentDatabase() AND active ORDER BY table, name")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		return strings.Join(names, ",")
	}
	exec := func(q string) {
		t.Helper()
		if err := e.conn.Exec(ctx(t), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	first, _ := summary()
	before := partNames()
	for _, table := range summaryTables {
		exec("OPTIMIZE TABLE " + table + " FINAL")
	}
	if partNames() == before {
		t.Fatal("OPTIMIZE merged nothing: the test does not exercise a merge")
	}
	kept, computed := summary()
	if computed {
		t.Fatal("a merge discarded the kept summary")
	}
	jsonEq(t, "kept after the merge", kept, first)

	// A mutation (the retention scrub's kind of change) discards it: ur-second's 300 cents taken
	// off its day's row (every version of it) in the observed usage days the summary reads.
	exec(fmt.Sprintf("ALTER TABLE reporting_observed_days_fine UPDATE amount_cents = amount_cents - 300 WHERE day = %d AND public_id = '%s'",
		MustDate("2026-03-29").Start().Unix()/86400, schemas.CustomerPublicID("app-1", reportingtest.Shop("1001"))))
	waitMutations(t, e)
	afterDelete, computed := summary()
	if !computed {
		t.Fatal("a mutation kept the summary computed before it")
	}
	if g, w := afterDelete.ByCurrency["USD"].Usage.ObservedUsageCharges.GrossCents, first.ByCurrency["USD"].Usage.ObservedUsageCharges.GrossCents-300; g != w {
		t.Fatalf("observed usage after the delete %d, want %d", g, w)
	}
	// So does a dropped partition.
	exec("ALTER TABLE reporting_observed_days_fine DROP PARTITION tuple()")
	afterDrop, computed := summary()
	if !computed {
		t.Fatal("a dropped partition kept the summary computed before it")
	}
	if g := afterDrop.ByCurrency["USD"].Usage.ObservedUsageCharges.GrossCents; g >= afterDelete.ByCurrency["USD"].Usage.ObservedUsageCharges.GrossCents {
		t.Fatalf("observed usage after the drop %d, not below %d", g, afterDelete.ByCurrency["USD"].Usage.ObservedUsageCharges.GrossCents)
	}
}

// waitMutations waits until ClickHouse applied every mutation of the test's database.
func waitMutations(t *testing.T, e env) {
	t.Helper()
	for i := 0; i < 200; i++ {
		var pending uint64
		if err := e.conn.QueryRow(ctx(t), "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND is_done = 0").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("mutations still pending")
}

// A received usage event changes only the usage activity: the summary after it reads usage_events
// (and the excluded customers it is scoped by) again, not the billing facts, and equals a summary
// computed from scratch.
func TestUsageEventsKeepTheBillingPart(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	rec := &recorder{Conn: e.conn}
	s := New(rec, WithClock(reportingtest.Clock))
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}
	before, err := s.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	e.fx.AddUsageEvent(reportingtest.UsageEvent{App: "app-1", ID: "ue-late", Shop: reportingtest.Shop("1001"), Name: "api_call",
		Quantity: 7, At: "2026-03-30T08:00:00Z"})
	e.fx.Flush(t)
	rec.mu.Lock()
	rec.queries = nil
	rec.mu.Unlock()
	after, err := s.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := New(e.conn, WithClock(reportingtest.Clock), WithResultCache(0)).Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "after a usage event", after, fresh)
	if after.UsageActivity.EventCount != before.UsageActivity.EventCount+1 {
		t.Fatalf("usage events %d, want %d", after.UsageActivity.EventCount, before.UsageActivity.EventCount+1)
	}
	from := regexp.MustCompile(`(?:FROM|JOIN)\s+(\w+)`)
	for q := range rec.queries {
		if q == selectDataVersion {
			continue
		}
		for _, m := range from.FindAllStringSubmatch(q, -1) {
			if slices.Contains(billingTables, m[1]) && !slices.Contains(activityTables, m[1]) {
				t.Errorf("a usage event made the summary read %s again", m[1])
			}
		}
	}
}
