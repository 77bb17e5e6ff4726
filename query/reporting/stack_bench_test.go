package reporting

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/internal/clickhousex"
)

// BenchmarkStack times the store against a database that is already loaded, such as the bench
// stack's after `make bench-query` (REPORTING_STACK_ADDR=127.0.0.1:39000), and breaks each target's
// ClickHouse CPU time down by query from system.query_log. It never writes. Optional:
// REPORTING_STACK_DB (revtrack), REPORTING_STACK_WORKSPACE and REPORTING_STACK_APPS (the workspace
// with slug "bench" and its apps),
// REPORTING_STACK_FROM and REPORTING_STACK_TO (the summary's range; default the 30 days before
// today), REPORTING_STACK_ROUNDS (10), REPORTING_STACK_ONLY (a pattern of the targets to run).
func BenchmarkStack(b *testing.B) {
	addr := os.Getenv("REPORTING_STACK_ADDR")
	if addr == "" {
		b.Skip("REPORTING_STACK_ADDR is not set")
	}
	c := context.Background()
	cfg := clickhousex.DefaultConfig()
	cfg.Addr = addr
	if u := os.Getenv("REVTRACK_CLICKHOUSE_USERNAME"); u != "" {
		cfg.Username, cfg.Password = u, os.Getenv("REVTRACK_CLICKHOUSE_PASSWORD")
	}
	if db := os.Getenv("REPORTING_STACK_DB"); db != "" {
		cfg.Database = db
	}
	conn, err := clickhousex.Open(c, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ws, apps := os.Getenv("REPORTING_STACK_WORKSPACE"), strings.Fields(os.Getenv("REPORTING_STACK_APPS"))
	if len(apps) == 0 {
		if err := conn.QueryRow(c, `SELECT workspace_id, argMax(selected_app_ids, version) FROM workspaces
WHERE slug = 'bench' OR workspace_id = ? GROUP BY workspace_id LIMIT 1`, ws).Scan(&ws, &apps); err != nil {
			b.Fatal(err)
		}
	}
	today := DateOf(time.Now())
	rng := Range{From: today.AddDays(-30), To: today.AddDays(-1)}
	if v := os.Getenv("REPORTING_STACK_FROM"); v != "" {
		rng.From = MustDate(v)
	}
	if v := os.Getenv("REPORTING_STACK_TO"); v != "" {
		rng.To = MustDate(v)
	}
	rounds := 10
	if v, err := strconv.Atoi(os.Getenv("REPORTING_STACK_ROUNDS")); err == nil {
		rounds = v
	}
	sc := Scope{WorkspaceID: ws, AppIDs: apps}
	cpu := cpuMeter{t: b, cfg: cfg, run: strconv.FormatInt(time.Now().UnixNano(), 36)}
	rec := &recorder{Conn: conn}
	// Every target is computed each time (the cost after new data landed), except the ones marked
	// "kept", which go through the result cache (the cost while the data stays the same).
	s, kept := New(rec, WithResultCache(0)), New(rec)
	only := regexp.MustCompile(os.Getenv("REPORTING_STACK_ONLY"))
	measure := func(name string, f func() error) {
		if !only.MatchString(name) {
			return
		}
		rec.Conn = cpu.conn(name)
		var ds []time.Duration
		for i := 0; i < rounds+2; i++ {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			if i >= 2 {
				ds = append(ds, time.Since(t0))
			}
		}
		slices.Sort(ds)
		logLine("%-34s p50 %6.1f ms  p90 %6.1f ms  min %6.1f ms", name, ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]), ms(ds[0]))
		cpu.targets = append(cpu.targets, name)
		cpu.requests[name] = rounds + 2
	}
	measure("baseline: one row", func() error {
		var n uint8
		return s.conn.QueryRow(c, "SELECT 1").Scan(&n)
	})
	req := Request{Scope: sc, Range: rng, CustomerScope: ScopeIncluded}
	measure("summary", func() error { _, err := s.Summary(c, req); return err })
	for _, m := range Metrics {
		measure("metric "+m, func() error { _, err := s.Metric(c, m, req); return err })
	}
	measure("kept: summary", func() error { _, err := kept.Summary(c, req); return err })
	// The revenue rows of make bench-query (bench/query/target_revenue.go): 365 daily points ending on
	// the summary's last date, the 12 calendar months before that date's month.
	year := Request{Scope: sc, Range: Range{From: rng.To.AddDays(-364), To: rng.To}, CustomerScope: ScopeIncluded}
	measure("series mrr daily 365", func() error { _, err := s.Series(c, MetricMRR, IntervalDay, year); return err })
	month := Date{time.Date(rng.To.Start().Year(), rng.To.Start().Month(), 1, 0, 0, 0, 0, time.UTC)}
	months := Request{Scope: sc, Range: Range{From: Date{month.Start().AddDate(0, -12, 0)}, To: month.AddDays(-1)}, CustomerScope: ScopeIncluded}
	measure("movements monthly 12", func() error {
		_, err := s.Movements(c, MovementsRequest{Request: months, Interval: IntervalMonth})
		return err
	})
	attribution := AttributionRequest{Scope: sc, Range: rng, GroupBy: GroupUTMCampaign}
	measure("attribution by campaign", func() error { _, err := s.Attribution(c, attribution); return err })
	var page CustomerList
	list := ListRequest{Scope: sc, Range: Range{From: today.AddDays(-29), To: today}, CustomerScope: ScopeIncluded, Limit: 50}
	measure("customers, first page", func() (err error) { page, err = s.Customers(c, list); return err })
	if page.Customers == nil {
		if page, err = s.Customers(c, list); err != nil {
			b.Fatal(err)
		}
	}
	deep := list
	deep.Cursor = page.Customers[len(page.Customers)-1].ID
	if v := os.Getenv("REPORTING_STACK_CURSOR"); v != "" {
		deep.Cursor = v
	}
	measure("customers, a later page", func() error { _, err := s.Customers(c, deep); return err })
	measure("kept: customers, first page", func() error { _, err := kept.Customers(c, list); return err })
	id := page.Customers[7].ID
	measure("customer detail", func() error {
		_, err := s.Customer(c, DetailRequest{Scope: sc, Ref: id, Range: list.Range})
		return err
	})
	cpu.report(conn)
	cpu.byQuery(conn)
	dumpQueries(b, rec)
}

// byQuery logs each target's queries with their CPU time, rows read and duration per request.
func (m *cpuMeter) byQuery(conn clickhouse.Conn) {
	c := context.Background()
	for _, name := range m.targets {
		n := float64(m.requests[name])
		rows, err := conn.Query(c, `SELECT substring(replaceRegexpAll(query, '\\s+', ' '), 1, 90) AS q, count(), sum(read_rows),
    sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'UserTimeMicroseconds')] + ProfileEvents.Values[indexOf(ProfileEvents.Names, 'SystemTimeMicroseconds')]),
    sum(query_duration_ms)
FROM system.query_log WHERE type = 2 AND event_date >= yesterday() AND startsWith(client_name, ?)
GROUP BY q ORDER BY 4 DESC`, m.client(name))
		if err != nil {
			logLine("%s: no query log: %v", name, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "%s:\n", name)
		for rows.Next() {
			var (
				q                   string
				count, read, micros uint64
				duration            uint64
			)
			if err := rows.Scan(&q, &count, &read, &micros, &duration); err != nil {
				m.t.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "  %6.1f ms CPU %6.1f ms wall %4.1f× %9.0f rows  %s\n", float64(micros)/1000/n, float64(duration)/n, float64(count)/n,
				float64(read)/n, q)
		}
		rows.Close()
	}
}
