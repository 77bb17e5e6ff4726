package processors

import (
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestRetentionDropsOldMonthsAndScrubsUploads writes rows dated long ago, at the edge of the window
// and recently into every retained table and the upload queue, then applies retention on the real
// ClickHouse.
func TestRetentionDropsOldMonthsAndScrubsUploads(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) // cutoff 2026-05-25 12:00
	old := time.Date(2025, 3, 14, 8, 0, 0, 0, time.UTC)   // a whole month before the cutoff
	edge := time.Date(2026, 5, 2, 8, 0, 0, 0, time.UTC)   // older than the cutoff, but its month is not
	recent := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)

	for i, at := range []time.Time{old, edge, recent} {
		id := []string{"old", "edge", "recent"}[i]
		bev := schemas.BrowserEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: "acq-" + id,
			Name: "page_view", OccurredAt: at, ReceivedAt: at, FirstTouch: schemas.FirstTouch{Gclid: "g-" + id}}
		sev := schemas.ServerEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: "acq-" + id,
			Name: "install", OccurredAt: at, ReceivedAt: at}
		st := schemas.SessionState{SourceID: "src", WorkspaceID: "ws", AcquisitionID: "acq-" + id, SessionID: "s-" + id,
			StartedAt: at, LastEventAt: at, EventCount: 1, SessionOrdinal: 1}
		insertRows(t, e, insertBrowserEvents, browserEventRow(bev)) // acquisitions follows through its view
		insertRows(t, e, insertServerEvents, serverEventRow(sev))
		insertRows(t, e, insertFunnelEvents, funnelRowValues(funnelRowOf(sev, nil)))
		insertRows(t, e, insertSessions, sessionRowValues(sessionRow{SessionState: st, Version: 1}))
		insertRows(t, e, insertSessionState, stateRowValues(stateRow{browserKey{"src", st.AcquisitionID}, &browserState{SessionState: st, Version: 1}}))
		insertRows(t, e, `INSERT INTO upload_queue (row_id, workspace_id, mapping_id, source_id, acquisition_id, click_id_type, click_id,
status, created_at, updated_at, version)`, []any{id, "ws", "map", "src", "acq-" + id, "gclid", "g-" + id, "queued", at, at, uint64(1)})
	}

	rep, err := RunRetention(ctx, e.ch, now)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tbl := range retainedTables {
		want = append(want, tbl+"/202503")
	}
	// Scrubbing is per row: the edge row is past 180 days even though its month is not.
	if !reflect.DeepEqual(rep.Dropped, want) || rep.Scrubbed != 2 || !rep.Cutoff.Equal(time.Date(2026, 5, 25, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("report %+v, want dropped %v and the old and edge upload rows scrubbed", rep, want)
	}
	for _, tbl := range retainedTables {
		if n := count(t, e, "SELECT count() FROM "+tbl); n != 2 {
			t.Errorf("%s keeps %d rows, want the edge and recent ones", tbl, n)
		}
	}
	eventually(t, "the old and edge upload rows scrubbed (an asynchronous mutation)", func() bool {
		return count(t, e, "SELECT count() FROM upload_queue WHERE row_id IN ('old', 'edge') AND click_id = '' AND acquisition_id = '' AND click_id_type = 'gclid'") == 2
	})
	if n := count(t, e, "SELECT count() FROM upload_queue WHERE row_id = 'recent' AND click_id = 'g-recent' AND acquisition_id = 'acq-recent'"); n != 1 {
		t.Fatal("the recent upload row lost its identifiers")
	}

	// A second run (another instance, the next day) finds nothing to do.
	rep, err = RunRetention(ctx, e.ch, now)
	if err != nil || len(rep.Dropped) != 0 || rep.Scrubbed != 0 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
	// A month later, the edge month goes too.
	rep, err = RunRetention(ctx, e.ch, now.AddDate(0, 1, 0))
	if err != nil || len(rep.Dropped) != len(retainedTables) || rep.Scrubbed != 0 {
		t.Fatalf("a month later: %+v, %v", rep, err)
	}
}

func insertRows(t *testing.T, e env, insert string, rows ...[]any) {
	t.Helper()
	b, err := e.ch.PrepareBatch(testenv.Ctx(t), insert)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := b.Append(r...); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
}

// TestRetentionRunsWithTheService: the process component applies retention when it starts (and
// daily after), so rows past retention disappear without anyone calling RunRetention.
func TestRetentionRunsWithTheService(t *testing.T) {
	e := setup(t)
	old := time.Now().UTC().AddDate(-1, 0, 0)
	insertRows(t, e, insertServerEvents, serverEventRow(schemas.ServerEvent{EventID: "old", SourceID: "src", WorkspaceID: "ws",
		AppID: "app", Name: "install", OccurredAt: old, ReceivedAt: old}))
	stop := startService(t, e)
	defer stop()
	eventually(t, "the year-old server event dropped", func() bool { return count(t, e, "SELECT count() FROM server_events") == 0 })
}

// TestRetentionSkipsForeignPartitions: a partition that is not a month of a retained table is never
// dropped, whatever system.parts says.
func TestRetentionSkipsForeignPartitions(t *testing.T) {
	_, conn := testenv.ClickHouse(t)
	ctx := testenv.Ctx(t)
	if err := conn.Exec(ctx, "CREATE TABLE server_events (k String, at DateTime('UTC')) ENGINE = MergeTree PARTITION BY toDate(at) ORDER BY k"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "CREATE TABLE upload_queue (created_at DateTime('UTC'), click_id String, acquisition_id String) ENGINE = MergeTree ORDER BY created_at"); err != nil {
		t.Fatal(err)
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO server_events (k, at)")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append("x", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	rep, err := RunRetention(ctx, conn, time.Now())
	if err != nil || len(rep.Dropped) != 0 {
		t.Fatalf("dropped %v (%v): a daily partition is not a month", rep.Dropped, err)
	}
}
