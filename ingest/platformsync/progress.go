package platformsync

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/schemas"
)

// Progress of a running run (docs/PLATFORM_SYNC.md "Progress of a running run"). The walks update a
// tracker in memory at every page; a goroutine of the run publishes a snapshot to Redis every
// Interval with a TTL of ttlIntervals × Interval, and the run deletes it after its final row is
// written. Redis rather than sync_runs rows: the reader is often another process, the snapshot is
// worthless once the run ends, and a key that expires is exactly "the process stopped publishing",
// where a row would stay "running with progress" until someone rewrote it.

// walkSteps is the number of walks a run makes (sync.go walk).
const walkSteps = 4

// ttlIntervals: a published snapshot outlives a few missed publishes (a slow Redis) but not a dead
// process by more than this many intervals.
const ttlIntervals = 5

// ProgressClient is the part of a Redis client the progress publisher uses.
type ProgressClient interface {
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

var _ ProgressClient = (redis.UniversalClient)(nil)

// ProgressPublisher writes runs' progress to Redis under schemas.SyncProgressKey.
type ProgressPublisher struct {
	Client ProgressClient
	Prefix string
	// Interval is how often a running run publishes (default 2s); the key expires after
	// 5 × Interval without a publish.
	Interval time.Duration
}

func (p *ProgressPublisher) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return 2 * time.Second
}

// TTL is how long a published snapshot lives without another publish.
func (p *ProgressPublisher) TTL() time.Duration { return ttlIntervals * p.interval() }

// Publish writes one run's progress with the publisher's TTL.
func (p *ProgressPublisher) Publish(ctx context.Context, ws, app, runID string, sp schemas.SyncProgress) error {
	b, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	return p.Client.SetArgs(ctx, schemas.SyncProgressKey(p.Prefix, ws, app, runID), b, redis.SetArgs{TTL: p.TTL()}).Err()
}

// Clear deletes a run's progress (the run has ended).
func (p *ProgressPublisher) Clear(ctx context.Context, ws, app, runID string) error {
	return p.Client.Del(ctx, schemas.SyncProgressKey(p.Prefix, ws, app, runID)).Err()
}

// run publishes tr every interval, and as soon as a walk starts (so a run shows progress from its
// first instant and its step changes at once: four extra writes a run), until stop is called; stop
// returns once no publish is in flight, so the caller's Clear comes after the last one.
func (p *ProgressPublisher) run(ctx context.Context, log *slog.Logger, m *Metrics, ws, app, runID string, tr *tracker) (stop func()) {
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(p.interval())
		defer t.Stop()
		failing := false
		for {
			if sp, ok := tr.snapshot(time.Now()); ok {
				pctx, cancel := context.WithTimeout(ctx, p.interval())
				err := p.Publish(pctx, ws, app, runID, sp)
				cancel()
				if err != nil && ctx.Err() == nil {
					m.progressFailed()
				}
				switch {
				case err != nil && !failing && ctx.Err() == nil:
					// Progress is a view: the run goes on; readers see none until a publish succeeds.
					log.Warn("sync progress not published", "err", err)
					failing = true
				case err == nil:
					failing = false
				}
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			case <-tr.walked:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// tracker is one run's progress as its walks make it. A nil *tracker records nothing.
type tracker struct {
	// walked signals the publisher that a walk has started.
	walked chan struct{}

	mu sync.Mutex
	sp schemas.SyncProgress
	// target of the current walk (zero: not known yet); began is the walk's wall-clock start and
	// loaded the stored records it has produced.
	target time.Time
	began  time.Time
	loaded uint64
	// rowsLeft bounds a backward transactions walk by the row limit (0: no bound); deadline is the
	// backfill budget's end (zero: none).
	rowsLeft uint64
	deadline time.Time
}

func newTracker() *tracker { return &tracker{walked: make(chan struct{}, 1)} }

// walk starts step's walk of stream in direction from from toward target (zero: not known).
func (t *tracker) walk(step int, stream, direction string, from, target time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sp.Walk = schemas.SyncWalk{Step: step, Steps: walkSteps, Stream: stream, Direction: direction, From: from, ReachedAt: from}
	t.target, t.began, t.loaded, t.rowsLeft, t.deadline = target, time.Now(), 0, 0, time.Time{}
	select {
	case t.walked <- struct{}{}:
	default: // a signal is pending already
	}
}

// bound sets what else ends the current walk, before its first page: its target, the rows left
// under the row limit, the budget's deadline (zero values: none). The walk's rate is measured from
// here: the request that found the target is not a pace the pages will keep.
func (t *tracker) bound(target time.Time, rowsLeft uint64, deadline time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.target, t.rowsLeft, t.deadline, t.began = target, rowsLeft, deadline, time.Now()
}

// page records a fetched page: n stored records produced, the walk now loaded through reached
// (zero: not moved).
func (t *tracker) page(n uint64, reached time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sp.Pages++
	t.loaded += n
	if t.sp.Walk.Stream == StreamTransactions {
		t.sp.TransactionsCount += n
	} else {
		t.sp.EventsCount += n
	}
	if !reached.IsZero() {
		t.sp.Walk.ReachedAt = reached
	}
}

// reach moves the walk's instant without a page (a window loaded to its end).
func (t *tracker) reach(at time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sp.Walk.ReachedAt = at
}

// snapshot is the progress at now; ok is false before the first walk has started.
func (t *tracker) snapshot(now time.Time) (schemas.SyncProgress, bool) {
	if t == nil {
		return schemas.SyncProgress{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sp.Walk.Step == 0 {
		return schemas.SyncProgress{}, false
	}
	sp := t.sp
	sp.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	if !t.target.IsZero() {
		tg := t.target
		sp.Walk.Target = &tg
	}
	sp.Walk.EstimatedSecondsLeft = t.estimate(now)
	return sp, true
}

// estimate is the current walk's time left (nil: not known). The walk has moved through history at
// moved/elapsed so far; at that rate it needs remaining/rate more. It ends earlier at the row limit
// (same reasoning with records) or the budget's deadline, so the smallest bound wins. Nothing is
// estimated without a target, before a second has passed or before the walk has moved at all: a
// rate from no data would be made up.
func (t *tracker) estimate(now time.Time) *int64 {
	w := t.sp.Walk
	if t.target.IsZero() {
		return nil
	}
	remaining := absDur(t.target.Sub(w.ReachedAt))
	if remaining == 0 {
		return secondsPtr(0)
	}
	elapsed := now.Sub(t.began)
	moved := absDur(w.ReachedAt.Sub(w.From))
	if elapsed < time.Second || moved == 0 {
		return nil
	}
	left := float64(elapsed) * float64(remaining) / float64(moved)
	if t.rowsLeft > 0 && t.loaded > 0 {
		left = math.Min(left, float64(elapsed)*float64(t.rowsLeft-min(t.loaded, t.rowsLeft))/float64(t.loaded))
	}
	if !t.deadline.IsZero() {
		left = math.Min(left, float64(max(t.deadline.Sub(now), 0)))
	}
	return secondsPtr(time.Duration(min(left, float64(math.MaxInt64/2))))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// secondsPtr rounds up: "0 s left" only when nothing is.
func secondsPtr(d time.Duration) *int64 {
	s := int64(math.Ceil(d.Seconds()))
	return &s
}
