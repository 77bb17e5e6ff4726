package processors

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

// BenchmarkPlatformDeriveHistory measures landing with derivation on a stored history of
// production size, where the cost of reading each touched customer's events back shows:
//
//   - last-day: the last day of every app (a scheduled sync's worth), in batches of 5,000;
//   - resync: four batches of 5,000 records taken from across the history (the late batches of a
//     backfill, a re-sync), landed again.
//
// The history is partnerfake.BenchConfig with PLATFORM_BENCH_SHOPS shops (default 2,000; 43,400
// gives the benchmark scale of docs/BENCHMARKS.md: about 5.25 million events and 5 million
// transactions over 36 months), landed without derivation and then derived once per customer, and
// merged (OPTIMIZE … FINAL). With PLATFORM_BENCH_DB=name the database is kept and reused while it
// holds customers (a load at the benchmark scale takes about 15 minutes):
//
//	PLATFORM_BENCH_SHOPS=43400 PLATFORM_BENCH_DB=derive_bench go test -run '^$' -bench DeriveHistory -benchtime 3x -timeout 2h ./processors/
func BenchmarkPlatformDeriveHistory(b *testing.B) {
	shops := 2000
	if v := os.Getenv("PLATFORM_BENCH_SHOPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("PLATFORM_BENCH_SHOPS: %v", err)
		}
		shops = n
	}
	cfg := partnerfake.BenchConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Shops = shops
	ds := partnerfake.Generate(cfg)
	total := ds.NumEvents() + ds.NumTransactions()
	conn := historyDatabase(b, ds)

	const batch = 5000
	cut := ds.Config.End.Add(-24 * time.Hour)
	var lastDay []schemas.PlatformRecord
	var resync [][]schemas.PlatformRecord
	starts := []int{total / 8, 3 * total / 8, 5 * total / 8, 7 * total / 8}
	i := 0
	for r := range fakeRecordSeq(ds, "bench") {
		if !recordTime(r).Before(cut) {
			lastDay = append(lastDay, r)
		}
		for k, s := range starts {
			if i >= s && i < s+batch {
				if len(resync) <= k {
					resync = append(resync, nil)
				}
				resync[k] = append(resync[k], r)
			}
		}
		i++
	}
	b.Logf("history: %d events, %d transactions, %d customers; last day %d records", ds.NumEvents(), ds.NumTransactions(),
		ds.NumCustomers(), len(lastDay))

	// Each batch is landed twice, derived once from the copies ordered by customer and once from
	// the source tables (the derivation before migration 0012), so that both read paths are timed
	// at the same moments of a shared machine.
	type path struct {
		name string
		d    *PlatformDeriver
		t    landTimes
		n    int
	}
	paths := func() []*path {
		src := NewPlatformDeriver(conn)
		src.sources.sourcesOnly = true
		return []*path{{name: "copies", d: NewPlatformDeriver(conn)}, {name: "sources", d: src}}
	}
	land := func(b *testing.B, ps []*path, recs []schemas.PlatformRecord) {
		for _, p := range ps {
			p.t.add(landTimedWith(b, conn, recs, batch, p.d))
			p.n += len(recs)
		}
		if got := ps[0].d.sources.known; !got.events || !got.sales {
			b.Fatalf("the derivation does not read the copies (%+v): are they recorded complete?", got)
		}
	}
	report := func(b *testing.B, ps []*path) {
		for _, p := range ps {
			b.ReportMetric(float64(p.n)/(p.t.insert+p.t.derive).Seconds(), "records/s-"+p.name)
			b.ReportMetric(float64(p.t.derive.Milliseconds())/float64(p.t.batches), "derive-ms/batch-"+p.name)
		}
		b.ReportMetric(float64(ps[0].t.insert.Milliseconds())/float64(ps[0].t.batches), "insert-ms/batch")
	}
	b.Run("last-day", func(b *testing.B) {
		ps := paths()
		for range b.N {
			land(b, ps, lastDay)
		}
		b.ReportMetric(float64(len(lastDay)), "records")
		report(b, ps)
	})
	b.Run("resync", func(b *testing.B) {
		ps := paths()
		for range b.N {
			for _, part := range resync {
				land(b, ps, part)
			}
		}
		report(b, ps)
	})
}

// historyDatabase is a migrated database holding ds, landed and derived. With PLATFORM_BENCH_DB it is
// that database, kept after the benchmark and loaded only while it holds no customer.
func historyDatabase(b *testing.B, ds *partnerfake.Dataset) driver.Conn {
	b.Helper()
	ctx := context.Background()
	cfg := testenv.ClickHouseConfig(b) // a scratch database, dropped at the end, unless named below
	if name := os.Getenv("PLATFORM_BENCH_DB"); name != "" {
		cfg.Database = name
	}
	cfg.ReadTimeout = 10 * time.Minute // OPTIMIZE … FINAL of millions of rows
	rdb, rc := testenv.Redis(b)
	t0 := time.Now()
	var logs bytes.Buffer
	if _, err := bootstrap.Migrate(ctx, cfg, rdb, rc.KeyPrefix, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		b.Fatal(err)
	}
	if strings.Contains(logs.String(), "backfilling empty copies") {
		// A database loaded before the copies of migration 0012: the migrations copied its history.
		b.Logf("migrated and backfilled in %s:\n%s", time.Since(t0).Round(time.Millisecond), logs.String())
	}
	conn, err := clickhousex.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM platform_customers").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n > 0 {
		b.Logf("reusing database %s (%d customer rows)", cfg.Database, n)
		return conn
	}
	loadHistory(b, conn, ds)
	return conn
}

// loadHistory lands ds without derivation, derives every customer once, and merges the tables.
func loadHistory(b *testing.B, conn driver.Conn, ds *partnerfake.Dataset) {
	ctx := context.Background()
	s := NewPlatformSink(conn)
	d := s.Derive
	s.Derive = nil
	t0 := time.Now()
	customers := map[rowKey]bool{}
	var part []schemas.PlatformRecord
	flush := func() {
		if err := s.Write(ctx, part); err != nil {
			b.Fatal(err)
		}
		part = part[:0]
	}
	for r := range fakeRecordSeq(ds, "bench") {
		part = append(part, r)
		if r.LifecycleEvent != nil {
			customers[rowKey{r.WorkspaceID, r.AppID, r.LifecycleEvent.CustomerID}] = true
		}
		if len(part) == 20000 {
			flush()
		}
	}
	flush()
	t1 := time.Now()
	// Each customer once: a record naming it is all Derive needs.
	var named []schemas.PlatformRecord
	deriveNamed := func() {
		if err := d.Derive(ctx, nil, named); err != nil {
			b.Fatal(err)
		}
		named = named[:0]
	}
	for k := range customers {
		named = append(named, schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: k.WorkspaceID, AppID: k.AppID,
			LifecycleEvent: &schemas.LifecycleEvent{CustomerID: k.ID}})
		if len(named) == maxDeriveLookups/2*deriveChunk {
			deriveNamed()
		}
	}
	deriveNamed()
	t2 := time.Now()
	for _, table := range []string{"platform_lifecycle_events", "platform_transactions", "platform_usage_charges",
		"platform_customers", "platform_charges"} {
		if err := conn.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded in %s, derived %d customers in %s, merged in %s", t1.Sub(t0).Round(time.Second), len(customers),
		t2.Sub(t1).Round(time.Second), time.Since(t2).Round(time.Second))
}
