package reportingbackfill_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

const (
	touches     = "acquisition_touches"
	touchesView = "acquisition_touches_mv"
)

// acquisition_touches (migration 0025) is a summary of plain values: SummaryOf takes it, with the
// acquisitions' key, and its SELECT has no aggregate state.
func TestTouchesAreASummary(t *testing.T) {
	s, err := schemas.SummaryOf(touches)
	if err != nil {
		t.Fatal(err)
	}
	if s.View != touchesView || s.Source != "browser_events" || s.Month != "occurred_at" || s.TableMonth != "event_month" ||
		strings.Join(s.Key, ",") != "workspace_id,app_id,source_id,acquisition_id" || s.Keep != "1" {
		t.Errorf("%+v", s)
	}
}

// touchesOf is each acquisition's first touch as attribution reads acquisition_touches (the row of
// greatest version, the smallest first_at over the months); acquisitionsOf the same of acquisitions,
// merged, whose view existed all along.
const (
	touchesOf = `SELECT source_id, acquisition_id, concat(toString(min(first_at)), ' ', argMax(first_event_id, version)),
    concat(argMax(gclid, version), '/', argMax(gbraid, version)), argMax(wbraid, version)
FROM acquisition_touches GROUP BY source_id, acquisition_id ORDER BY source_id, acquisition_id`
	acquisitionsOf = `SELECT source_id, acquisition_id, concat(toString(minMerge(first_seen)), ' ', any(first_event)),
    concat(argMinMerge(first_gclid), '/', argMinMerge(first_gbraid)), argMinMerge(first_wbraid)
FROM acquisitions ANY INNER JOIN (
    SELECT source_id, acquisition_id, argMin(event_id, (occurred_at, occurred_ms, event_id)) AS first_event
    FROM browser_events GROUP BY source_id, acquisition_id) USING (source_id, acquisition_id)
GROUP BY source_id, acquisition_id ORDER BY source_id, acquisition_id`
)

// A database whose browser events landed before acquisition_touches' view existed: the backfill
// summarises every month once, and the first touches then agree with acquisitions', acquisition by
// acquisition, including an earlier event that landed after the view (it wins) and events of one
// browser in one second (the millisecond, then the event ID, decide).
func TestTouchesBackfill(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	if err := conn.Exec(ctx, "DROP TABLE "+touchesView); err != nil {
		t.Fatal(err)
	}
	clickHistory(t, conn)
	if err := conn.Exec(ctx, statementCreating(t, touchesView)); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(mixedLater,
		// acq-late's first touch so far is 2024-11-20 (news, organic): an event of 2024-11-02 lands now.
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT 'late-0', 'src-ws-a', 'ws-a', 'app', 'acq-late', 'page_view', toDateTime('2024-11-02 09:00:00', 'UTC'), 'gclid-earliest'`) {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	forgetTouches(t, conn)
	if got, want := dump(t, conn, touchesOf), dump(t, conn, acquisitionsOf); got == want {
		t.Fatal("the touches agree before the backfill: the test lands nothing before the view")
	}

	var out bytes.Buffer
	res, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{touches}, DryRun: true, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summaries) != 1 || res.Summaries[0].Summarised != 4 || res.Summaries[0].Lacking == 0 || res.Summaries[0].Recorded {
		t.Fatalf("dry run: %+v\n%s", res.Summaries, out.String())
	}
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{touches}, ChunkRows: 1000, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summaries) != 1 || res.Summaries[0].Summarised != 4 || !res.Summaries[0].Recorded {
		t.Fatalf("run: %+v\n%s", res.Summaries, out.String())
	}
	want := dump(t, conn, acquisitionsOf)
	if got := dump(t, conn, touchesOf); got != want {
		t.Fatalf("after the backfill:\n%s\nacquisitions:\n%s", got, want)
	}
	if !strings.Contains(want, `src-ws-a acq-late "2024-11-02 09:00:00 late-0" "gclid-earliest/" ""`) {
		t.Errorf("acq-late's earlier event is not its first touch:\n%s", want)
	}

	// A second run reads the records only; a merge changes no touch.
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{touches}, Out: &out})
	if err != nil || len(res.Summaries) != 1 || res.Summaries[0].Summarised != 0 || !res.Summaries[0].Recorded {
		t.Fatalf("second run: %+v, %v", res.Summaries, err)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE "+touches+" FINAL"); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, conn, touchesOf); got != want {
		t.Fatalf("merged:\n%s\nacquisitions:\n%s", got, want)
	}
	if n := count(t, conn, "SELECT count() FROM "+touches); n != count(t, conn, "SELECT count() FROM (SELECT DISTINCT source_id, acquisition_id, event_month FROM acquisitions)") {
		t.Errorf("merged, acquisition_touches holds %d rows, not one per acquisition and month", n)
	}
}

// statementCreating is the migrations' statement that creates the named view.
func statementCreating(t *testing.T, view string) string {
	t.Helper()
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			if strings.HasPrefix(st, "CREATE MATERIALIZED VIEW IF NOT EXISTS "+view+" ") {
				return st
			}
		}
	}
	t.Fatal("no statement creates " + view)
	return ""
}

// forgetTouches drops the records of the summary (a fresh database records it complete).
func forgetTouches(t *testing.T, conn driver.Conn) {
	t.Helper()
	if err := conn.Exec(testenv.Ctx(t), "ALTER TABLE "+schemas.CopyBackfillsTable+" DELETE WHERE startsWith(copy, '"+touches+"')"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the records of acquisition_touches deleted", func() bool {
		for r := range recorded(t, conn) {
			if strings.HasPrefix(r, touches) {
				return false
			}
		}
		return true
	})
}
