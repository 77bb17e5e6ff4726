package reportingbackfill_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

const (
	clicks     = "acquisition_clicks"
	clicksView = "acquisition_clicks_mv"
)

func clicksSummary(t *testing.T) schemas.Summary {
	t.Helper()
	s, err := schemas.SummaryOf(clicks)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The summary is read from the migration's own text.
func TestSummaryOfTheMigrations(t *testing.T) {
	s := clicksSummary(t)
	if s.View != clicksView || s.Source != "browser_events" || s.Month != "occurred_at" || s.TableMonth != "event_month" ||
		strings.Join(s.Key, ",") != "workspace_id,app_id,source_id,acquisition_id" ||
		s.Keep != "first_gclid != '' OR first_gbraid != '' OR first_wbraid != ''" {
		t.Errorf("%+v", s)
	}
	if !strings.HasPrefix(s.Select, "SELECT\n    source_id,") || !strings.HasSuffix(s.Select, "HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1") {
		t.Errorf("select:\n%s", s.Select)
	}
	if w := s.SelectWhere("x = 1"); !strings.Contains(w, "FROM browser_events\nWHERE x = 1\nGROUP BY source_id, acquisition_id, event_month, workspace_id, app_id\nHAVING ") {
		t.Errorf("restricted:\n%s", w)
	}
	if _, err := schemas.SummaryOf("reporting_events"); err == nil {
		t.Error("a copy was taken for a summary")
	}
}

// clickHistory lands browser events of 600 browsers over four months (2024-11 to 2025-02) in two
// workspaces, about a third carrying a click ID, some in the same second (the event ID breaks the
// tie), plus:
//   - acq-late: an organic visit in November, a click (gclid-late) in December;
//   - acq-mixed: a click (gclid-early) on 5 January, and later in January another (see mixedLater).
func clickHistory(t *testing.T, conn driver.Conn) {
	t.Helper()
	for _, q := range []string{
		historyEvents,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_utm_source)
SELECT 'late-1', 'src-ws-a', 'ws-a', 'app', 'acq-late', 'page_view', toDateTime('2024-11-20 09:00:00', 'UTC'), 'news'`,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_utm_source, first_gclid)
SELECT 'late-2', 'src-ws-a', 'ws-a', 'app', 'acq-late', 'page_view', toDateTime('2024-12-02 09:00:00', 'UTC'), 'news', 'gclid-late'`,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT 'mixed-1', 'src-ws-a', 'ws-a', 'app', 'acq-mixed', 'page_view', toDateTime('2025-01-05 09:00:00', 'UTC'), 'gclid-early'`,
	} {
		if err := conn.Exec(testenv.Ctx(t), q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

// mixedLater lands, once the view exists, a later January click of acq-mixed and again 300 events
// landed before (a redelivery): the view summarises them, and January's row of acq-mixed then
// holds gclid-later until the backfill adds the earlier click.
var mixedLater = []string{
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT 'mixed-2', 'src-ws-a', 'ws-a', 'app', 'acq-mixed', 'page_view', toDateTime('2025-01-20 09:00:00', 'UTC'), 'gclid-later'`,
	strings.Replace(historyEvents, "FROM numbers(6000)", "FROM numbers(5300) WHERE number >= 5000", 1),
}

// historyEvents are clickHistory's 6000 events of 600 browsers. Event n and n+3000 are of the same
// browser, in the same second, and carry different gclids when either does.
const historyEvents = `INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, occurred_ms, first_gclid, first_gbraid, first_wbraid)
SELECT concat('e-', toString(number)), concat('src-', if(number % 600 % 3 = 0, 'ws-b', 'ws-a')), if(number % 600 % 3 = 0, 'ws-b', 'ws-a'), 'app',
concat('acq-', toString(number % 600)), 'page_view', toDateTime('2024-11-01 00:00:00', 'UTC') + intDiv(number % 3000, 3) * 10000, 0,
if(number % 3000 % 7 = 0, concat('g-', toString(number)), ''), if(number % 11 = 0, concat('b-', toString(number)), ''),
if(number % 13 = 0, concat('w-', toString(number)), '')
FROM numbers(6000)`

// landBeforeTheView lands the history on a database whose summary view did not exist yet: the
// view is dropped, the history lands, and the migration's statement creates the view again.
func landBeforeTheView(t *testing.T, conn driver.Conn) {
	t.Helper()
	ctx := testenv.Ctx(t)
	if err := conn.Exec(ctx, "DROP TABLE "+clicksView); err != nil {
		t.Fatal(err)
	}
	clickHistory(t, conn)
	if err := conn.Exec(ctx, viewStatement(t)); err != nil {
		t.Fatal(err)
	}
	for _, q := range mixedLater {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

func viewStatement(t *testing.T) string {
	t.Helper()
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			if strings.HasPrefix(st, "CREATE MATERIALIZED VIEW IF NOT EXISTS "+clicksView+" ") {
				return st
			}
		}
	}
	t.Fatal("no statement creates " + clicksView)
	return ""
}

// mergedClicks is the summary as the matcher reads it: per acquisition, merged over months.
func mergedClicks(t *testing.T, conn driver.Conn) string {
	t.Helper()
	return dump(t, conn, `SELECT source_id, acquisition_id, argMinMerge(click_gclid), argMinMerge(click_gbraid), argMinMerge(click_wbraid)
FROM acquisition_clicks GROUP BY source_id, acquisition_id ORDER BY source_id, acquisition_id`)
}

// wantClicks is what the summary should hold, from every browser event, written without the view.
func wantClicks(t *testing.T, conn driver.Conn) string {
	t.Helper()
	return dump(t, conn, `SELECT source_id, acquisition_id, argMin(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)),
    argMin(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)), argMin(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id))
FROM browser_events GROUP BY source_id, acquisition_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1 ORDER BY source_id, acquisition_id`)
}

func dump(t *testing.T, conn driver.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(testenv.Ctx(t), q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var src, acq, g, br, w string
		if err := rows.Scan(&src, &acq, &g, &br, &w); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %q %q %q\n", src, acq, g, br, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func count(t *testing.T, conn driver.Conn, q string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(testenv.Ctx(t), q).Scan(&n); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return n
}

func clickRecords(t *testing.T, conn driver.Conn) []string {
	t.Helper()
	var out []string
	for r := range recorded(t, conn) {
		if strings.HasPrefix(r, clicks) {
			out = append(out, r)
		}
	}
	return out
}

// forgetClicks drops the records of the summary: the state before any backfill.
func forgetClicks(t *testing.T, conn driver.Conn) {
	t.Helper()
	if err := conn.Exec(testenv.Ctx(t), "ALTER TABLE "+schemas.CopyBackfillsTable+" DELETE WHERE startsWith(copy, '"+clicks+"')"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the records of acquisition_clicks deleted", func() bool { return len(clickRecords(t, conn)) == 0 })
}

// matcher runs the upload matcher (processors.UploadMatchSink) on a real broker for one workspace
// with an install mapping of src-ws-a.
type matcher struct {
	conn driver.Conn
	kc   kafkax.Config
	p    *kgo.Client
	sink *processors.UploadMatchSink
	seen map[string]bool // row IDs of the jobs read so far
}

func newMatcher(t *testing.T, conn driver.Conn) *matcher {
	t.Helper()
	kc, p := pipeline.Topics(t)
	for _, q := range []string{
		`INSERT INTO ad_connections (connection_id, workspace_id, provider, state, version) SELECT 'conn-1', 'ws-a', 'google', 'connected', 1`,
		`INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone, conversion_action_id, enabled, version)
SELECT 'm-1', 'ws-a', 'conn-1', 'src-ws-a', 'install', '123456', 1, 1`,
	} {
		if err := conn.Exec(testenv.Ctx(t), q); err != nil {
			t.Fatal(err)
		}
	}
	return &matcher{conn: conn, kc: kc, p: p, seen: map[string]bool{},
		sink: &processors.UploadMatchSink{Conn: conn, Producer: p, Topic: kc.Topic(schemas.TopicUploadJobs),
			Metrics: processors.NewUploadMatchMetrics(prometheus.NewRegistry(), "upload-match"), Log: pipeline.Quiet}}
}

// click matches an install of the acquisition and returns its job's click, as "type:id".
func (m *matcher) click(t *testing.T, eventID, acq string) string {
	t.Helper()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := schemas.ServerEvent{EventID: eventID, SourceID: "src-ws-a", WorkspaceID: "ws-a", AppID: "app", AcquisitionID: acq,
		Name: "install", OccurredAt: at, ReceivedAt: at}
	if err := m.sink.Write(testenv.Ctx(t), []schemas.ServerEvent{ev}); err != nil {
		t.Fatal(err)
	}
	var fresh []schemas.UploadJob
	for _, j := range m.jobs(t) {
		if !m.seen[j.RowID] {
			m.seen[j.RowID] = true
			fresh = append(fresh, j)
		}
	}
	if len(fresh) != 1 || fresh[0].AcquisitionID != acq {
		t.Fatalf("jobs of %s: %+v", eventID, fresh)
	}
	return fresh[0].ClickIDType + ":" + fresh[0].ClickID
}

// jobs reads the upload-jobs topic to its end.
func (m *matcher) jobs(t *testing.T) []schemas.UploadJob {
	t.Helper()
	var out []schemas.UploadJob
	for _, r := range testenv.ReadToEnd(t, m.kc.Brokers, m.p, m.kc.Topic(schemas.TopicUploadJobs)) {
		var j schemas.UploadJob
		if err := json.Unmarshal(r.Value, &j); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// A database whose browser events landed before acquisition_clicks' view existed: the matcher
// misses a click that followed an organic visit; a dry run reports the months and writes nothing;
// a run summarises every month, after which the summary merges to what every event gives and the
// matcher finds the click; a second run reads nothing but the records; a run that summarises
// every month again (records deleted) leaves the merged values as they were, before and after
// ClickHouse merges the parts.
func TestSummaryBackfill(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	landBeforeTheView(t, conn)
	forgetClicks(t, conn) // the migrations recorded it complete: browser_events was empty then
	m := newMatcher(t, conn)
	want := wantClicks(t, conn)
	if !strings.Contains(want, `src-ws-a acq-late "gclid-late" "" ""`) || !strings.Contains(want, `src-ws-a acq-mixed "gclid-early" "" ""`) ||
		strings.Count(want, "\n") < 300 {
		t.Fatalf("history:\n%s", want)
	}
	before := mergedClicks(t, conn)
	if !strings.Contains(before, `src-ws-a acq-mixed "gclid-later" "" ""`) || strings.Contains(before, "acq-late") {
		t.Fatalf("the view summarised more than what landed after it:\n%s", before)
	}
	if got := m.click(t, "install-1", "acq-late"); got != ":" {
		t.Fatalf("before the backfill acq-late's job has click %q, want none (its first touch was organic)", got)
	}

	var out bytes.Buffer
	rows := count(t, conn, "SELECT count() FROM "+clicks)
	res, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{DryRun: true, Tables: []string{clicks}, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT count() FROM "+clicks); n != rows || len(clickRecords(t, conn)) != 0 {
		t.Fatalf("the dry run wrote: %d rows (had %d), records %v", n, rows, clickRecords(t, conn))
	}
	if len(res.Copies) != 0 || len(res.Summaries) != 1 {
		t.Fatalf("dry run: %+v", res)
	}
	if sr := res.Summaries[0]; sr.Months != 4 || sr.Summarised != 4 || sr.Rows < 6004 || sr.Rows > 6304 || sr.Lacking == 0 || sr.Lacking >= sr.Groups || sr.Recorded {
		t.Fatalf("dry run: %+v\n%s", sr, out.String())
	}
	if !strings.Contains(out.String(), "acquisition_clicks 2024-12: lacks ") {
		t.Fatalf("dry run output:\n%s", out.String())
	}

	out.Reset()
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{ChunkRows: 1000, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run:\n%s", out.String())
	if sr := res.Summaries[0]; sr.Months != 4 || sr.Summarised != 4 || sr.Done != 0 || !sr.Recorded {
		t.Fatalf("run: %+v", sr)
	}
	if got := mergedClicks(t, conn); got != want {
		t.Fatalf("after the backfill the summary differs from the events\n--- want\n%s\n--- got\n%s", want, got)
	}
	if got := m.click(t, "install-2", "acq-late"); got != "gclid:gclid-late" {
		t.Fatalf("after the backfill acq-late's job has click %q, want gclid:gclid-late", got)
	}
	if got := m.click(t, "install-3", "acq-mixed"); got != "gclid:gclid-early" {
		t.Fatalf("after the backfill acq-mixed's job has click %q, want gclid:gclid-early", got)
	}
	rows = count(t, conn, "SELECT count() FROM "+clicks)

	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{clicks}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Summaries[0]; sr.Summarised != 0 || !sr.Recorded || count(t, conn, "SELECT count() FROM "+clicks) != rows {
		t.Fatalf("second run: %+v", sr)
	}

	// Every month again: each row's states are added a second time.
	forgetClicks(t, conn)
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{clicks}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Summaries[0]; sr.Summarised != 4 || count(t, conn, "SELECT count() FROM "+clicks) <= rows {
		t.Fatalf("run after the records were deleted: %+v", sr)
	}
	if got := mergedClicks(t, conn); got != want {
		t.Fatalf("summarised twice, the summary differs\n--- want\n%s\n--- got\n%s", want, got)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE "+clicks+" FINAL"); err != nil {
		t.Fatal(err)
	}
	if got := mergedClicks(t, conn); got != want {
		t.Fatalf("summarised twice and merged, the summary differs\n--- want\n%s\n--- got\n%s", want, got)
	}
}

// A workspace's run summarises its rows of every month and records them for it alone; a second
// one skips them; a run of every workspace then summarises every month and records the summary.
func TestSummaryBackfillOfAWorkspace(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	landBeforeTheView(t, conn)
	forgetClicks(t, conn)
	want := wantClicks(t, conn)

	res, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{WorkspaceID: "ws-b", Tables: []string{clicks}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Summaries[0]; sr.Months != 4 || sr.Summarised != 4 || sr.Recorded || sr.Rows >= 6304 {
		t.Fatalf("workspace run: %+v", sr)
	}
	got := mergedClicks(t, conn)
	for _, line := range strings.SplitAfter(want, "\n") {
		if strings.HasPrefix(line, "src-ws-b ") && !strings.Contains(got, line) {
			t.Errorf("after ws-b's run %q is missing", line)
		}
	}
	if strings.Contains(got, "acq-late") || !strings.Contains(got, `src-ws-a acq-mixed "gclid-later"`) {
		t.Errorf("ws-b's run summarised ws-a:\n%s", got)
	}
	if r := clickRecords(t, conn); len(r) != 4 || !strings.HasSuffix(r[0], " ws-b") {
		t.Fatalf("records %v", r)
	}
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{WorkspaceID: "ws-b", Tables: []string{clicks}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Summaries[0]; sr.Done != 4 || sr.Summarised != 0 {
		t.Fatalf("second workspace run: %+v", sr)
	}
	res, err = reportingbackfill.Run(ctx, conn, reportingbackfill.Options{Tables: []string{clicks}})
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Summaries[0]; sr.Summarised != 4 || !sr.Recorded || mergedClicks(t, conn) != want {
		t.Fatalf("run: %+v", sr)
	}
}

// After the migrations the summary is summarised when browser_events holds a click, whether the
// view has summarised later events already or not, and recorded complete without reading further
// when it holds none.
func TestAutoSummary(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if r := clickRecords(t, conn); len(r) != 1 || r[0] != clicks {
		t.Fatalf("a fresh database has %v recorded, want %s", r, clicks)
	}
	landBeforeTheView(t, conn) // the view has summarised mixedLater
	forgetClicks(t, conn)
	var logs bytes.Buffer
	if err := reportingbackfill.Auto(ctx, conn, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if got, want := mergedClicks(t, conn), wantClicks(t, conn); got != want || !recorded(t, conn)[clicks] {
		t.Fatalf("after Auto: recorded %v\n--- want\n%s\n--- got\n%s\n%s", clickRecords(t, conn), want, got, logs.String())
	}
	rows := count(t, conn, "SELECT count() FROM "+clicks)
	if err := reportingbackfill.Auto(ctx, conn, quiet); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, "SELECT count() FROM "+clicks); n != rows {
		t.Fatalf("a second Auto wrote %d rows", n-rows)
	}

	// No browser event with a click: recorded, nothing written.
	for _, q := range []string{"TRUNCATE TABLE " + clicks, "ALTER TABLE browser_events DELETE WHERE first_gclid != '' OR first_gbraid != '' OR first_wbraid != ''"} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "the clicks deleted", func() bool {
		return count(t, conn, "SELECT count() FROM browser_events WHERE first_gclid != '' OR first_gbraid != '' OR first_wbraid != ''") == 0
	})
	forgetClicks(t, conn)
	if err := reportingbackfill.Auto(ctx, conn, quiet); err != nil {
		t.Fatal(err)
	}
	if r := clickRecords(t, conn); len(r) != 1 || r[0] != clicks || count(t, conn, "SELECT count() FROM "+clicks) != 0 {
		t.Fatalf("without clicks: records %v", r)
	}
}
