package platformsync_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/syncruns"
)

// listRuns reads the runs as their readers do (query/syncruns): what the sync wrote.
func listRuns(t *testing.T, e *env, ws, app string, limit int) ([]syncruns.RunRecord, error) {
	t.Helper()
	return syncruns.Store{CH: e.db.Conn}.List(testenv.Ctx(t), ws, app, limit)
}

// gate holds every partner API request after the first `free` until opened (or the client gives
// up: the body is read first, so the server notices a closed connection).
type gate struct {
	free   int64
	seen   atomic.Int64
	opened chan struct{}
	once   sync.Once
}

func newGate(t *testing.T, e *env, free int64) *gate {
	g := &gate{free: free, opened: make(chan struct{})}
	t.Cleanup(g.open)
	wrap := func(w http.ResponseWriter, r *http.Request) {
		peek(r)
		if g.seen.Add(1) > g.free {
			select {
			case <-g.opened:
			case <-r.Context().Done():
				return
			}
		}
		e.fake.ServeHTTP(w, r)
	}
	e.wrap.Store(&wrap)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.opened) }) }

// waitHeld waits until a request is held at the gate.
func (g *gate) waitHeld(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, "a request held at the gate", func() bool { return g.seen.Load() > g.free })
}

// Two instances schedule the same app at once: exactly one syncs it, the other skips it (it finds
// the run's lock taken, or the run's row already written). While the run is in flight a pass an
// interval later skips it on the lock, and a manual run reports "already running"; after it, a
// pass within the interval skips the app and one an interval later syncs it again.
func TestSchedulerRunsAnAppOnceAcrossInstances(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	a, b := e.service(t, cfg), e.service(t, cfg)
	ctx := testenv.Ctx(t)
	g := newGate(t, e, 3)
	now0 := *e.now.Load()
	setClock := func(d time.Duration) { at := now0.Add(d); e.now.Store(&at) }

	done := make(chan string, 2)
	go func() { a.SchedulePass(ctx); done <- "a" }()
	go func() { b.SchedulePass(ctx); done <- "b" }()
	g.waitHeld(t)
	var first string
	select {
	case first = <-done: // the instance that lost skipped the app and is done
	case <-time.After(10 * time.Second):
		t.Fatal("neither pass skipped the app: both are syncing it")
	}

	// An interval later, while the run is still in flight: skipped on the lock.
	busy := func() float64 {
		return metricValue(t, e.reg, "revtrack_platform_sync_already_running_total", map[string]string{"trigger": "schedule"})
	}
	before := busy()
	setClock(cfg.Interval)
	b.SchedulePass(ctx)
	if got := busy(); got != before+1 {
		t.Errorf("already-running skips %v → %v, want one more", before, got)
	}
	// A manual run of the app, in flight elsewhere, is refused.
	if _, err := b.Start(ctx, e.ws.ID, nil, platformsync.TriggerManual); !errors.Is(err, platformsync.ErrAlreadyRunning) {
		t.Errorf("Start while running: %v, want ErrAlreadyRunning", err)
	}
	if _, err := a.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual); !errors.Is(err, platformsync.ErrAlreadyRunning) ||
		!strings.Contains(err.Error(), "already running") {
		t.Errorf("RunApp while running: %v, want already running", err)
	}
	g.open()
	second := <-done
	if first == second {
		t.Fatal("one instance finished twice")
	}
	runs, err := listRuns(t, e, e.ws.ID, e.app, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Trigger != platformsync.TriggerSchedule || runs[0].Status != platformsync.StatusSucceeded {
		t.Fatalf("runs %+v, want one succeeded scheduled run", runs)
	}

	// Within the interval of that run's start: skipped (another instance synced the app).
	setClock(cfg.Interval / 2)
	b.SchedulePass(ctx)
	if runs, _ := listRuns(t, e, e.ws.ID, "", 10); len(runs) != 1 {
		t.Fatalf("%d runs after a pass half an interval after the last: want the app skipped", len(runs))
	}
	setClock(cfg.Interval + time.Minute)
	b.SchedulePass(ctx)
	runs, _ = listRuns(t, e, e.ws.ID, "", 10)
	if len(runs) != 2 || runs[0].Status != platformsync.StatusSucceeded || !runs[0].StartedAt.Equal(now0.Add(cfg.Interval+time.Minute)) {
		t.Fatalf("runs %+v: want a second scheduled run an interval later", runs)
	}
}

// Run schedules passes until its context ends.
func TestRunSchedulesPasses(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.Interval = time.Minute
	svc := e.service(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, true) }()
	testenv.Eventually(t, "a scheduled run", func() bool {
		return e.count(t, "SELECT count() FROM sync_runs FINAL WHERE workspace_id = ? AND trigger = 'schedule' AND status = 'succeeded'", e.ws.ID) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A run started in the background ends failed, with the reason, when the service shuts down; its
// lock is released and the next run resumes from the cursors.
func TestShutdownEndsBackgroundRunsFailedAndResumable(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.Overlap = 0
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	g := newGate(t, e, 10)
	started, err := svc.Start(ctx, e.ws.ID, nil, platformsync.TriggerManual)
	if err != nil || len(started.Runs) != 1 || started.Runs[0].Status != platformsync.StatusRunning || len(started.AlreadyRunning) != 0 {
		t.Fatalf("Start: %+v, %v", started, err)
	}
	g.waitHeld(t)
	runs, err := listRuns(t, e, e.ws.ID, e.app, 5)
	if err != nil || len(runs) != 1 || runs[0].Status != platformsync.StatusRunning || runs[0].FinishedAt != nil {
		t.Fatalf("while running: %+v, %v", runs, err)
	}
	svc.Close() // the process shuts down
	runs, _ = listRuns(t, e, e.ws.ID, e.app, 5)
	if len(runs) != 1 || runs[0].Status != platformsync.StatusFailed || !strings.Contains(runs[0].Error, "shutting down") || runs[0].FinishedAt == nil {
		t.Fatalf("after shutdown: %+v", runs)
	}
	e.wrap.Store(nil)
	run, err := e.service(t, cfg).RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
	if err != nil || run.Status != platformsync.StatusSucceeded {
		t.Fatalf("resumed run %+v: %v", run, err)
	}
	e.waitTransactions(t, e.transactionIDs(time.Time{}, time.Time{}))
}

// A run left "running" by a process that died is marked failed by the next run of the app (which
// holds the app's lock, so the old one cannot be alive).
func TestRunLeftRunningByADeadProcessIsMarkedFailed(t *testing.T) {
	e := newEnv(t, noLimit())
	ctx := testenv.Ctx(t)
	b, err := e.db.Conn.PrepareBatch(ctx, `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, events_count,
transactions_count, truncated, error, version)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append("dead-run", e.ws.ID, e.app, "schedule", "running", end, uint64(0), uint64(0), uint8(0), "", uint64(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	svc := e.service(t, config())
	if _, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual); err != nil {
		t.Fatal(err)
	}
	runs, err := listRuns(t, e, e.ws.ID, e.app, 5)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v: %v", runs, err)
	}
	dead := runs[1]
	if dead.RunID != "dead-run" || dead.Status != platformsync.StatusFailed || !strings.Contains(dead.Error, "stopped before it finished") || dead.FinishedAt == nil {
		t.Errorf("dead run %+v", dead)
	}
}

// Starting runs validates the request before anything runs.
func TestStartRefusals(t *testing.T) {
	e := newEnv(t, noLimit())
	svc := e.service(t, config())
	ctx := testenv.Ctx(t)
	if _, err := svc.Start(ctx, e.ws.ID, []string{"gid://partners/App/999"}, platformsync.TriggerManual); !errors.Is(err, platformsync.ErrAppNotSelected) {
		t.Errorf("unselected app: %v", err)
	}
	if err := e.store.Partners(keyring(t)).DisconnectPartner(ctx, "test", "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(ctx, e.ws.ID, nil, platformsync.TriggerManual); !errors.Is(err, platformsync.ErrNotConnected) {
		t.Errorf("disconnected workspace: %v", err)
	}
	svc.SchedulePass(ctx) // skips the disconnected workspace
	if n := e.count(t, "SELECT count() FROM sync_runs"); n != 0 {
		t.Errorf("%d runs recorded", n)
	}
}
