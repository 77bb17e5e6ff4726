package bootstrap

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestMigrateTwiceIsNoop(t *testing.T) {
	ctx := testenv.Ctx(t)
	ch := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)

	first, err := Migrate(ctx, ch, rdb, rc.KeyPrefix, quiet)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := schemas.Migrations()
	if len(first.Applied) != len(all) {
		t.Fatalf("first run applied %v, want all %d", first.Applied, len(all))
	}
	second, err := Migrate(ctx, ch, rdb, rc.KeyPrefix, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Applied) != 0 || second.Current != first.Current {
		t.Fatalf("second run: %+v, want no-op at %d", second, first.Current)
	}
	conn := open(t, ch)
	assertTables(t, conn, ch.Database)
	schemaGolden(t, conn, ch.Database)
}

func open(t *testing.T, ch clickhousex.Config) driver.Conn {
	t.Helper()
	conn, err := clickhousex.Open(testenv.Ctx(t), ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// schemaGolden records the effective schema as the server reports it, so that any change to a
// table's columns, engine or keys shows up in review as a diff of testdata/schema.golden.sql.
func schemaGolden(t *testing.T, conn driver.Conn, database string) {
	t.Helper()
	ctx := testenv.Ctx(t)
	rows, err := conn.Query(ctx, "SELECT create_table_query FROM system.tables WHERE database = ? ORDER BY name", database)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.ReplaceAll(q, database+".", "revtrack.") + ";\n\n")
	}
	testenv.Golden(t, "testdata/schema.golden.sql", []byte(b.String()))
}

func TestConcurrentMigrators(t *testing.T) {
	ctx := testenv.Ctx(t)
	ch := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)

	const n = 4
	results := make([]schemas.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = Migrate(ctx, ch, rdb, rc.KeyPrefix, quiet)
		}()
	}
	wg.Wait()
	total := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		total += len(results[i].Applied)
	}
	all, _ := schemas.Migrations()
	if total != len(all) {
		t.Fatalf("migrations applied %d times in total, want each once (%d)", total, len(all))
	}
	conn := open(t, ch)
	var rows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM schema_migrations FINAL").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != uint64(len(all)) {
		t.Fatalf("schema_migrations has %d rows, want %d", rows, len(all))
	}
}

// assertTables checks that the data model of docs/ARCHITECTURE.md exists.
func assertTables(t *testing.T, conn driver.Conn, database string) {
	t.Helper()
	ctx := testenv.Ctx(t)
	want := []string{"workspaces", "workspace_members", "apps", "api_keys", "tracking_sources", "audit_log",
		"browser_events", "server_events", "sessions", "acquisition_links", "session_state",
		"acquisitions", "acquisitions_mv", "shop_attribution", "shop_attribution_mv", "funnel_events",
		"partner_connections", "platform_customers", "platform_charges", "platform_lifecycle_events", "platform_transactions",
		"platform_usage_charges", "usage_events", "sync_runs", "sync_cursors",
		"ad_connections", "conversion_actions", "ad_mappings", "upload_queue", "sealed_secrets", "schema_migrations"}
	for _, tbl := range want {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name = ?", database, tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s missing", tbl)
		}
	}
}

func TestEnsureTopicsIdempotent(t *testing.T) {
	ctx := testenv.Ctx(t)
	kc := testenv.KafkaConfig(t)
	cl, err := kafkax.NewProducer(kc, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 2 {
		if err := EnsureTopics(ctx, cl, kc); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	t.Cleanup(func() {
		var names []string
		for _, s := range TopicSpecs() {
			names = append(names, kc.Topic(s.Name))
		}
		_, _ = adm.DeleteTopics(context.Background(), names...)
	})
	for _, s := range TopicSpecs() {
		name := kc.Topic(s.Name)
		details, err := adm.ListTopics(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := details[name]
		if !ok || d.Err != nil {
			t.Fatalf("topic %s not created: %v", name, d.Err)
		}
		if got := int32(len(d.Partitions)); got != s.Partitions {
			t.Errorf("%s: %d partitions, want %d", name, got, s.Partitions)
		}
		cfgs, err := adm.DescribeTopicConfigs(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := cfgs.On(name, nil)
		for _, kv := range rc.Configs {
			if kv.Key == "cleanup.policy" {
				want := "delete"
				if s.Compact {
					want = "compact"
				}
				if kv.MaybeValue() != want {
					t.Errorf("%s: cleanup.policy %q, want %q", name, kv.MaybeValue(), want)
				}
			}
		}
	}
}
