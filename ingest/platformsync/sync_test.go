package platformsync_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
)

// The first run loads the recent window forward, then fills older history backwards, window by
// window and newest first, across many pages, until the app's first record; the cursors then hold
// exactly the coverage docs/METRICS.md 7.1 defines.
func TestFirstRunLoadsRecentHistoryThenBackfillsToOrigin(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.Overlap = 0
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	walk := recordWalk(e)
	run, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	want := e.transactionIDs(time.Time{}, time.Time{})
	if run.Status != platformsync.StatusSucceeded || run.TransactionsCount != uint64(len(want)) || run.EventsCount != e.numEvents() || run.Truncated {
		t.Fatalf("run %+v, want succeeded with %d transactions and %d events", run, len(want), e.numEvents())
	}
	e.waitTransactions(t, want)
	e.waitEvents(t, e.numEvents())

	now := *e.now.Load()
	first := e.firstAt(time.Time{})
	if c := e.cursor(t, "transactions"); !c.WindowEnd.Equal(now) {
		t.Errorf("forward edge %v, want %v", c.WindowEnd, now)
	}
	if c := e.cursor(t, "transactions:start"); c.Cursor != platformsync.CursorOrigin || !c.WindowEnd.Equal(first) {
		t.Errorf("transactions:start = %+v, want origin at the first transaction %v", c, first)
	}
	if c := e.cursor(t, "lifecycle_events:start"); c.Cursor != platformsync.CursorOrigin {
		t.Errorf("lifecycle_events:start = %+v, want origin", c)
	}
	if run.CoverageFrom == nil || !run.CoverageFrom.Equal(first) || run.CoverageThrough == nil || !run.CoverageThrough.Equal(now) {
		t.Errorf("run coverage %v … %v, want %v … %v", run.CoverageFrom, run.CoverageThrough, first, now)
	}

	// The walks' requests: forward from the initial window's start, then backward from it, newest
	// window first and newest page first, in many pages.
	fwd, bwd := walk.requests()
	if len(fwd) == 0 || !fwd[0].min.Equal(e.initialStart(cfg)) {
		t.Fatalf("first forward request %+v, want createdAtMin %v", fwd, e.initialStart(cfg))
	}
	if len(bwd) < 8 || !bwd[0].max.Equal(e.initialStart(cfg).Add(-time.Second)) || bwd[0].cursor != "" {
		t.Fatalf("backward requests %+v: want at least 8, the first up to %v", bwd, e.initialStart(cfg).Add(-time.Second))
	}
	windows := 1
	for i := 1; i < len(bwd); i++ {
		if bwd[i].max.After(bwd[i-1].max) || bwd[i].min.After(bwd[i-1].min) {
			t.Fatalf("backward walk moved forward: %+v → %+v", bwd[i-1], bwd[i])
		}
		if bwd[i].cursor == "" {
			windows++
		}
	}
	if windows < 3 || windows == len(bwd) {
		t.Errorf("backward walk: %d requests in %d windows, want several windows of several pages", len(bwd), windows)
	}
	if n := e.count(t, `SELECT count() FROM sync_runs FINAL WHERE workspace_id = ? AND status = 'succeeded'`, e.ws.ID); n != 1 {
		t.Errorf("%d succeeded runs", n)
	}
	if got := metricValue(t, e.reg, "revtrack_platform_sync_records_total", map[string]string{"stream": "transactions", "walk": "backward"}); got == 0 || got >= float64(len(want)) {
		t.Errorf("backward transactions counted %v of %d", got, len(want))
	}
	if strings.Contains(e.logs.String(), e.token) {
		t.Error("the logs contain the partner token")
	}
}

// The fake's token bucket (4 requests/s, burst 4) and scripted 429s and 503s are retried until
// the run completes; the sync's metrics count the throttles.
func TestThrottlingIsRetried(t *testing.T) {
	// The bucket's clock moves 125 ms per request instead of with the wall: a slow machine would
	// otherwise refill the bucket between requests and never be throttled. At 4 tokens a second a
	// request earns half a token, so once the burst is spent every other request is throttled.
	scfg := partnerfake.DefaultServerConfig()
	var ticks atomic.Int64
	base := time.Now()
	scfg.Now = func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * 125 * time.Millisecond) }
	e := newEnv(t, scfg)
	e.client = func(c *platformsync.Client) {
		c.PageSize, c.MaxAttempts, c.Backoff, c.MaxBackoff = 100, 30, 50*time.Millisecond, time.Second
	}
	cfg := config()
	cfg.Window = 60 * 24 * time.Hour
	cfg.RequestsPerSecond = 0 // unpaced, so that the fake's bucket throttles
	e.fake.Script(partnerfake.Fault{Status: 429, Times: 3}, partnerfake.Fault{Status: 503})
	run, err := e.service(t, cfg).RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || run.Status != platformsync.StatusSucceeded {
		t.Fatalf("run %+v: %v", run, err)
	}
	st := e.fake.Stats()
	if st.Throttled == 0 || st.Faulted != 4 {
		t.Errorf("fake stats %+v: want throttling and 4 scripted faults", st)
	}
	if got := metricValue(t, e.reg, "revtrack_platform_sync_throttled_total", nil); got != float64(st.Throttled+3) {
		t.Errorf("throttled metric %v, want %d", got, st.Throttled+3)
	}
	e.waitTransactions(t, e.transactionIDs(time.Time{}, time.Time{}))
}

// A run cancelled in the middle ends failed with the reason; the next run resumes from the cursors
// and the tables end with exactly the fake's rows.
func TestCancelledRunResumesFromCursors(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.Overlap = 0
	svc := e.service(t, cfg)
	ctx, cancel := context.WithCancelCause(testenv.Ctx(t))
	var requests atomic.Int64
	wrap := func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 12 { // in the backward walk of lifecycle events
			cancel(errors.New("operator stopped the run"))
		}
		e.fake.ServeHTTP(w, r)
	}
	e.wrap.Store(&wrap)
	run1, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
	if err == nil || run1.Status != platformsync.StatusFailed || !strings.Contains(run1.Error, "operator stopped the run") {
		t.Fatalf("run %+v, err %v: want failed with the cancellation's reason", run1, err)
	}
	var status, msg string
	if err := e.db.Conn.QueryRow(testenv.Ctx(t), "SELECT toString(status), error FROM sync_runs FINAL WHERE run_id = ?", run1.RunID).Scan(&status, &msg); err != nil {
		t.Fatal(err)
	}
	if status != platformsync.StatusFailed || !strings.Contains(msg, "resumes") {
		t.Errorf("stored run %s %q", status, msg)
	}
	e.wrap.Store(nil)
	run2, err := svc.RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || run2.Status != platformsync.StatusSucceeded {
		t.Fatalf("second run %+v: %v", run2, err)
	}
	want := e.transactionIDs(time.Time{}, time.Time{})
	if run1.TransactionsCount == 0 || run1.TransactionsCount+run2.TransactionsCount != uint64(len(want)) {
		t.Errorf("runs produced %d + %d transactions, want %d in all (resumed, nothing read twice)", run1.TransactionsCount, run2.TransactionsCount, len(want))
	}
	e.waitTransactions(t, want)
	e.waitEvents(t, e.numEvents())
}

// Scripted 500s that exhaust the client's retries fail the run in its backfill; the next run
// resumes where the backward walk stopped.
func TestServerErrorsExhaustingRetriesThenResume(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	svc := e.service(t, cfg)
	// The backward query is the only one paging with `before`; the fifth backward request and its
	// retries fail.
	var backward atomic.Int64
	wrap := func(w http.ResponseWriter, r *http.Request) {
		body := peek(r)
		if strings.Contains(body, "before: $before") && strings.Contains(body, "transactions") && backward.Add(1) >= 5 {
			http.Error(w, `{"errors":[{"message":"Internal Server Error","extensions":{"code":"500"}}]}`, http.StatusInternalServerError)
			return
		}
		e.fake.ServeHTTP(w, r)
	}
	e.wrap.Store(&wrap)
	run1, err := svc.RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerSchedule)
	var he *platformsync.HTTPError
	if !errors.As(err, &he) || he.Status != 500 || run1.Status != platformsync.StatusFailed || !strings.Contains(run1.Error, "backfill") {
		t.Fatalf("run %+v, err %v: want failed in the backfill with HTTP 500", run1, err)
	}
	if c := e.cursor(t, "transactions:start"); platformsync.CursorOrigin == c.Cursor || !c.WindowEnd.Before(e.initialStart(cfg)) {
		t.Fatalf("transactions:start %+v: want a backfill in progress behind %v", c, e.initialStart(cfg))
	}
	e.wrap.Store(nil)
	run2, err := svc.RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerSchedule)
	if err != nil || run2.Status != platformsync.StatusSucceeded {
		t.Fatalf("second run %+v: %v", run2, err)
	}
	e.waitTransactions(t, e.transactionIDs(time.Time{}, time.Time{}))
}

// A run whose backfill budget runs out is partial; later runs continue the backfill and the one
// that finishes it succeeds.
func TestBackfillBudgetMakesRunsPartialUntilDone(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.BackfillBudget = time.Nanosecond // one page per stream and run
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	var statuses []string
	for i := 0; i < 200; i++ {
		run, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerSchedule)
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, run.Status)
		if run.Status != platformsync.StatusPartial {
			break
		}
	}
	if len(statuses) < 3 || statuses[0] != platformsync.StatusPartial || statuses[len(statuses)-1] != platformsync.StatusSucceeded {
		t.Fatalf("statuses %v: want partial runs, then succeeded", statuses)
	}
	e.waitTransactions(t, e.transactionIDs(time.Time{}, time.Time{}))
	e.waitEvents(t, e.numEvents())
}

// The transactions backward walk stops for good at the row limit, keeping the newest records;
// the run is succeeded (lifecycle events reached their origin) and truncated.
func TestRowLimitTruncatesTheBackfill(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.RowLimit = 50
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	run, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || run.Status != platformsync.StatusSucceeded || !run.Truncated {
		t.Fatalf("run %+v: %v: want succeeded and truncated", run, err)
	}
	start := e.initialStart(cfg)
	recent, older := e.transactionIDs(start, time.Time{}), e.transactionIDsBefore(start)
	if len(older) <= 50 {
		t.Fatalf("only %d transactions before the initial window; the test needs more than the limit", len(older))
	}
	kept := older[len(older)-50:]
	want := append(ids(kept), recent...)
	sortStrings(want)
	e.waitTransactions(t, want)
	c := e.cursor(t, "transactions:start")
	if c.Cursor != platformsync.CursorRowLimit || !c.WindowEnd.Equal(kept[0].CreatedAt.Add(time.Second)) {
		t.Errorf("transactions:start %+v: want row_limit a second after %v", c, kept[0].CreatedAt)
	}
	if run.CoverageFrom == nil || !run.CoverageFrom.Equal(c.WindowEnd) {
		t.Errorf("run coverage from %v, want %v", run.CoverageFrom, c.WindowEnd)
	}
	if c := e.cursor(t, "lifecycle_events:start"); c.Cursor != platformsync.CursorOrigin {
		t.Errorf("lifecycle events have no row limit: %+v", c)
	}
	// The limit is final: a later run only walks forward.
	run2, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || !run2.Truncated || run2.Status != platformsync.StatusSucceeded {
		t.Fatalf("second run %+v: %v", run2, err)
	}
	if c2 := e.cursor(t, "transactions:start"); c2 != c {
		t.Errorf("transactions:start moved after the row limit: %+v → %+v", c, c2)
	}
}

// With truncated platform history (SetHistoryFloor), the backward walk ends at the first record
// the platform still serves, and records that as the origin.
func TestHistoryFloorEndsTheBackfill(t *testing.T) {
	e := newEnv(t, noLimit())
	floor := end.AddDate(0, -5, 0)
	e.fake.SetHistoryFloor(floor)
	svc := e.service(t, config())
	run, err := svc.RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || run.Status != platformsync.StatusSucceeded || run.Truncated {
		t.Fatalf("run %+v: %v", run, err)
	}
	want := e.transactionIDs(floor, time.Time{})
	if len(want) == len(e.transactionIDs(time.Time{}, time.Time{})) {
		t.Fatal("the floor hides nothing; the test proves nothing")
	}
	e.waitTransactions(t, want)
	if c := e.cursor(t, "transactions:start"); c.Cursor != platformsync.CursorOrigin || !c.WindowEnd.Equal(e.firstAt(floor)) {
		t.Errorf("transactions:start %+v, want origin at %v", c, e.firstAt(floor))
	}
}

// Late records: the platform adds a sale after the sync passed its date. The next run re-reads
// the overlap, loads it, and re-produces the overlap's other records, which replace their rows
// rather than add to them (counted with FINAL).
func TestOverlapLoadsLateRecordsWithoutDoubleCounting(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.Overlap = 10 * 24 * time.Hour
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	lateFrom := end.Add(-2 * 24 * time.Hour)
	late := e.transactionIDs(lateFrom, time.Time{})
	if len(late) == 0 {
		t.Fatal("no transaction in the last two days")
	}
	hide := hideTransactions(e, lateFrom)
	e.wrap.Store(&hide)
	if _, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerSchedule); err != nil {
		t.Fatal(err)
	}
	all := e.transactionIDs(time.Time{}, time.Time{})
	e.waitTransactions(t, e.transactionIDs(time.Time{}, lateFrom.Add(-time.Second)))

	e.wrap.Store(nil) // the late records appear
	run2, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerSchedule)
	if err != nil {
		t.Fatal(err)
	}
	overlap := e.transactionIDs(e.now.Load().Add(-cfg.Overlap), time.Time{})
	if run2.TransactionsCount != uint64(len(overlap)) || len(overlap) <= len(late) {
		t.Errorf("second run produced %d transactions, want the %d of the overlap (%d of them late)", run2.TransactionsCount, len(overlap), len(late))
	}
	e.waitTransactions(t, all)
	// A third run re-reads the overlap again: still one row per transaction.
	if _, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerSchedule); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n, u := e.count(t, "SELECT count() FROM platform_transactions FINAL WHERE workspace_id = ?", e.ws.ID),
		e.count(t, "SELECT uniqExact(transaction_id) FROM platform_transactions WHERE workspace_id = ?", e.ws.ID); n != uint64(len(all)) || u != n {
		t.Errorf("FINAL rows %d, distinct IDs %d, want %d", n, u, len(all))
	}
	if raw := e.count(t, "SELECT count() FROM platform_transactions WHERE workspace_id = ?", e.ws.ID); raw < uint64(len(all)) {
		t.Errorf("raw rows %d < %d", raw, len(all))
	}
	if n := e.count(t, "SELECT count() FROM platform_lifecycle_events FINAL WHERE workspace_id = ?", e.ws.ID); n != e.numEvents() {
		t.Errorf("FINAL events %d, want %d", n, e.numEvents())
	}
}
