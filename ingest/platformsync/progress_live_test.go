package platformsync_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

// reader reads runs as the admin API, list_sync_runs and the CLI do: sync_runs with the progress
// the syncing process publishes in Redis.
func (e *env) reader() syncruns.Store {
	return syncruns.Store{CH: e.db.Conn, Live: e.db.Redis, Prefix: e.db.RedisC.KeyPrefix}
}

// pace delays every partner API request, so that a run lasts long enough to be watched.
func pace(e *env, d time.Duration) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		e.fake.ServeHTTP(w, r)
	}
	e.wrap.Store(&slow)
}

// A run watched by another reader while it runs shows its progress: counts and pages that only
// grow, walks in order, each moving its reached instant in its direction toward its target, and an
// estimate once a walk has a rate. Once the run ends it shows no progress, the final counts, and
// its Redis key is gone.
func TestRunningRunShowsLiveProgress(t *testing.T) {
	e := newEnv(t, noLimit())
	cfg := config()
	cfg.ProgressInterval = 50 * time.Millisecond
	svc := e.service(t, cfg)
	ctx := testenv.Ctx(t)
	pace(e, 60*time.Millisecond)
	began := time.Now()
	started, err := svc.Start(ctx, e.ws.ID, nil, platformsync.TriggerManual)
	if err != nil || len(started.Runs) != 1 {
		t.Fatalf("Start: %+v, %v", started, err)
	}
	runID := started.Runs[0].RunID

	var seen []schemas.SyncProgress
	var final syncruns.RunRecord
	var endedAt time.Time
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run did not end")
		}
		rs, err := e.reader().List(ctx, e.ws.ID, e.app, 1)
		if err != nil || len(rs) != 1 || rs[0].RunID != runID {
			t.Fatalf("list: %+v, %v", rs, err)
		}
		if rs[0].Status != platformsync.StatusRunning {
			final, endedAt = rs[0], time.Now()
			break
		}
		if p := rs[0].Progress; p != nil && (len(seen) == 0 || !p.UpdatedAt.Equal(seen[len(seen)-1].UpdatedAt)) {
			seen = append(seen, *p)
		}
	}
	took := time.Since(began)
	if len(seen) < 5 {
		t.Fatalf("%d progress snapshots seen in %v, want several", len(seen), took)
	}
	estimates, moved := 0, 0
	for i, p := range seen {
		w := p.Walk
		if w.Steps != 4 || w.Step < 1 || w.Step > 4 || (w.Direction == "forward") != (w.Step <= 2) {
			t.Fatalf("snapshot %d walk %+v", i, w)
		}
		if w.EstimatedSecondsLeft != nil {
			estimates++
			if *w.EstimatedSecondsLeft < 0 {
				t.Errorf("snapshot %d: negative estimate %d", i, *w.EstimatedSecondsLeft)
			}
		}
		if w.Target != nil && (w.Direction == "forward" && w.ReachedAt.After(*w.Target) || w.Direction == "backward" && w.ReachedAt.Before(*w.Target)) {
			t.Errorf("snapshot %d: reached %v beyond the target %v (%s)", i, w.ReachedAt, *w.Target, w.Direction)
		}
		if i == 0 {
			continue
		}
		q := seen[i-1]
		if p.EventsCount < q.EventsCount || p.TransactionsCount < q.TransactionsCount || p.Pages < q.Pages || w.Step < q.Walk.Step {
			t.Errorf("snapshot %d went back: %+v after %+v", i, p, q)
		}
		if w.Step == q.Walk.Step {
			switch d := w.ReachedAt.Sub(q.Walk.ReachedAt); {
			case w.Direction == "forward" && d < 0, w.Direction == "backward" && d > 0:
				t.Errorf("snapshot %d: the %s walk moved the wrong way: %v → %v", i, w.Direction, q.Walk.ReachedAt, w.ReachedAt)
			case d != 0:
				moved++
			}
		}
	}
	first, last := seen[0], seen[len(seen)-1]
	if last.EventsCount+last.TransactionsCount <= first.EventsCount+first.TransactionsCount || last.Pages <= first.Pages || moved < 3 {
		t.Errorf("no growth: first %+v, last %+v, window moved %d times", first, last, moved)
	}
	if estimates == 0 {
		t.Error("no snapshot carried an estimate")
	}
	t.Logf("estimates against the time each walk really took: %s", estimateErrors(seen, endedAt))
	steps := map[int]bool{}
	for _, p := range seen {
		steps[p.Walk.Step] = true
	}
	t.Logf("run took %v: %d snapshots over steps %v, %d with an estimate, window moved %d times; last %+v; final events %d transactions %d",
		took, len(seen), steps, estimates, moved, last, final.EventsCount, final.TransactionsCount)

	if final.Status != platformsync.StatusSucceeded || final.Progress != nil {
		t.Fatalf("ended run %+v", final)
	}
	if final.EventsCount < last.EventsCount || final.TransactionsCount < last.TransactionsCount || final.TransactionsCount == 0 {
		t.Errorf("final counts %d/%d below the last progress %d/%d", final.EventsCount, final.TransactionsCount, last.EventsCount, last.TransactionsCount)
	}
	if n, err := e.db.Redis.Exists(ctx, schemas.SyncProgressKey(e.db.RedisC.KeyPrefix, e.ws.ID, e.app, runID)).Result(); err != nil || n != 0 {
		t.Errorf("progress key after the end: %d, %v", n, err)
	}
}

// estimateErrors pairs each estimate with the time its walk really had left (until the first
// snapshot of a later step, or the end of the run), for the log.
func estimateErrors(seen []schemas.SyncProgress, endedAt time.Time) string {
	var out []string
	for i, p := range seen {
		if p.Walk.EstimatedSecondsLeft == nil {
			continue
		}
		stepEnd := endedAt
		for _, q := range seen[i+1:] {
			if q.Walk.Step > p.Walk.Step {
				stepEnd = q.UpdatedAt
				break
			}
		}
		out = append(out, fmt.Sprintf("step %d: %ds est, %.1fs real", p.Walk.Step, *p.Walk.EstimatedSecondsLeft, stepEnd.Sub(p.UpdatedAt).Seconds()))
	}
	return strings.Join(out, "; ")
}
