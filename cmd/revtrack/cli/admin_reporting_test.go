package cli_test

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestReportingBackfillCommand: on a database whose copies and acquisition_clicks were created
// after its history, a dry run reports and writes nothing, a run fills them, a second run copies
// and summarises nothing, and an unknown workspace is refused.
func TestReportingBackfillCommand(t *testing.T) {
	chc := testenv.ClickHouseConfig(t)
	run := cliRunner(t, chc)
	if _, logs, code := run("admin", "reporting", "backfill"); code != 0 { // migrates the fresh database
		t.Fatalf("exit %d: %s", code, logs)
	}
	ctx := testenv.Ctx(t)
	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, occurred_at, synced_at)
SELECT 'ws', 'app', toString(number), 'RELATIONSHIP_INSTALLED', toString(number % 7), toDateTime('2025-01-01 00:00:00', 'UTC') + number * 86400,
toDateTime('2026-01-01 00:00:00', 'UTC') FROM numbers(100)`,
		// 30 browsers in January 2025, a third of them with a click.
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT toString(number), 'src', 'ws', 'app', toString(number % 30), 'page_view', toDateTime('2025-01-01 00:00:00', 'UTC') + number * 3600,
if(number % 3 = 0, concat('gclid-', toString(number)), '') FROM numbers(300)`,
		"TRUNCATE TABLE reporting_events", "TRUNCATE TABLE platform_events_by_customer", "TRUNCATE TABLE acquisition_clicks",
		"TRUNCATE TABLE copy_backfills",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	count := func(table string) uint64 {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	out, logs, code := run("admin", "reporting", "backfill", "--dry-run")
	if code != 0 || !strings.Contains(out, "reporting_events ws app 2025-01: lacks 31 of 31 rows") ||
		!strings.Contains(out, "acquisition_clicks 2025-01: lacks 10 of 10 rows (300 rows of browser_events to summarise)") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, logs)
	}
	if n := count("reporting_events") + count("platform_events_by_customer") + count("acquisition_clicks") + count("copy_backfills"); n != 0 {
		t.Fatalf("the dry run wrote %d rows", n)
	}
	if _, logs, code := run("admin", "reporting", "backfill", "--workspace", "nope", "--auto-migrate=false"); code == 0 {
		t.Fatalf("an unknown workspace was accepted: %s", logs)
	}
	// Without the migrations' own settling, which would fill the empty copies itself.
	out, logs, code = run("admin", "reporting", "backfill", "--auto-migrate=false")
	if code != 0 || !strings.Contains(out, "platform_events_by_customer: 4 parts, 0 complete, 4 copied (100 rows), 0 still incomplete") ||
		!strings.Contains(out, "acquisition_clicks: 1 months, 0 done before, 1 summarised (300 rows of browser_events)") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, logs)
	}
	// Nineteen copies (the usage days, a copy of the customer days, the fine-granule copies of the
	// observed usage days and the charge facts, and the charge facts as text among them),
	// acquisition_clicks and acquisition_touches with their one month each, the customer days, the
	// observed usage days and the charge facts.
	if a, b, c := count("reporting_events"), count("platform_events_by_customer"), count("copy_backfills FINAL"); a != 100 || b != 100 || c != 26 {
		t.Fatalf("copies hold %d and %d rows, want 100; %d records", a, b, c)
	}
	if n := count("(SELECT acquisition_id FROM acquisition_clicks GROUP BY acquisition_id HAVING argMinMerge(click_gclid) != '')"); n != 10 {
		t.Fatalf("acquisition_clicks holds a click of %d browsers, want 10", n)
	}
	out, logs, code = run("admin", "reporting", "backfill", "--auto-migrate=false")
	if code != 0 || !strings.Contains(out, "reporting_events: 4 parts, 4 complete, 0 copied (0 rows)") ||
		!strings.Contains(out, "acquisition_clicks: recorded complete in copy_backfills, nothing to summarise") {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, logs)
	}
}
