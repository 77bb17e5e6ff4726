package platformsync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Conn is the part of a ClickHouse connection the syncer needs.
type Conn interface {
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

// Producer is the part of *kgo.Client the syncer needs.
type Producer interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
}

// Syncer runs one app's sync (docs/PLATFORM_SYNC.md): per stream a forward walk from the forward
// cursor to now, then a backward walk that fills older history window by window, newest first.
// Zero durations and limits take the defaults named on each field, except Overlap and
// BackfillBudget, whose zero means none (DefaultConfig sets the production values).
type Syncer struct {
	Client   *Client
	CH       Conn
	Producer Producer
	// Topic is the full platform-records topic name (with any test suffix).
	Topic string
	// PlatformApps maps a revtrack app ID to the partner API's ID of the app (gid://partners/App/…);
	// an app without an entry is asked for by its own ID.
	PlatformApps map[string]string
	// Window is the width of one createdAt/occurredAt window (default 30 days).
	Window time.Duration
	// InitialWindow is how much recent history the first run loads forward before the backward
	// walk starts (default 90 days; the start is rounded down to midnight UTC).
	InitialWindow time.Duration
	// Overlap is how far before the forward cursor each run re-reads, for records the platform
	// adds late (0: none).
	Overlap time.Duration
	// RowLimit caps the transactions the backward walk loads (default DefaultRowLimit).
	RowLimit uint64
	// BackfillBudget bounds the time one run spends on backward walks; every stream still gets at
	// least one page per run (0: no bound).
	BackfillBudget time.Duration
	// Progress publishes a running run's progress for readers in any process (nil: not published).
	Progress *ProgressPublisher
	Metrics  *Metrics
	Now      func() time.Time
	Log      *slog.Logger
}

// DefaultRowLimit is the transactions row limit per app (docs/METRICS.md 7.1).
const DefaultRowLimit = 1_000_000

// platformApp is the ID the partner API knows the app by.
func (s *Syncer) platformApp(app string) string {
	if id := s.PlatformApps[app]; id != "" {
		return id
	}
	return app
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Syncer) window() time.Duration {
	if s.Window > 0 {
		return s.Window
	}
	return 30 * 24 * time.Hour
}

func (s *Syncer) initialWindow() time.Duration {
	if s.InitialWindow > 0 {
		return s.InitialWindow
	}
	return 90 * 24 * time.Hour
}

func (s *Syncer) rowLimit() uint64 {
	if s.RowLimit > 0 {
		return s.RowLimit
	}
	return DefaultRowLimit
}

func (s *Syncer) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Run records a new run and executes it (Begin, then Execute).
//
// The partner access token is on s.Client: the caller opens it from the workspace's partner
// connection (controlplane Partners.PartnerConnection), as Service does.
func (s *Syncer) Run(ctx context.Context, workspaceID, appID, trigger string) (schemas.SyncRun, error) {
	run, err := s.Begin(ctx, workspaceID, appID, trigger)
	if err != nil {
		return run, err
	}
	return s.Execute(ctx, workspaceID, appID, run)
}

// Begin writes a new run row with status running and returns it.
func (s *Syncer) Begin(ctx context.Context, workspaceID, appID, trigger string) (schemas.SyncRun, error) {
	run := schemas.SyncRun{RunID: newRunID(), Trigger: trigger, Status: StatusRunning, StartedAt: s.now().Truncate(time.Second)}
	return run, writeRun(ctx, s.CH, workspaceID, appID, run)
}

// Execute runs a begun run: the forward walk of each stream to now, then the backward walks
// (lifecycle events first: charge states need their full history). Each page is produced to Kafka
// (ProduceSync) before its cursor moves, so a run that fails, is cancelled or dies resumes from the
// last committed cursor; at most the page in flight is produced again, which the ReplacingMergeTree
// tables absorb. The run ends succeeded (no backward walk left), partial (a backward walk is still
// in progress when BackfillBudget ran out) or failed (error, cancellation); the row is written with
// a context that outlives ctx.
func (s *Syncer) Execute(ctx context.Context, workspaceID, appID string, run schemas.SyncRun) (schemas.SyncRun, error) {
	log := s.log().With("workspace_id", workspaceID, "app_id", appID, "run_id", run.RunID, "trigger", run.Trigger)
	log.Info("sync run started")
	began := time.Now()
	tr := newTracker()
	stopProgress := s.Progress.run(ctx, log, s.Metrics, workspaceID, appID, run.RunID, tr)
	pending, err := s.walk(ctx, workspaceID, appID, &run, tr)
	stopProgress()

	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if fwd, ok, cerr := s.readCursor(cctx, workspaceID, appID, StreamTransactions); cerr == nil && ok {
		t := fwd.WindowEnd
		run.CoverageThrough = &t
	}
	if st, ok, cerr := s.readCursor(cctx, workspaceID, appID, StreamTransactions+startSuffix); cerr == nil && ok {
		t := st.WindowEnd
		run.CoverageFrom = &t
		run.Truncated = st.Cursor == CursorRowLimit
	}
	fin := s.now().Truncate(time.Second)
	run.FinishedAt = &fin
	switch {
	case err != nil:
		run.Status = StatusFailed
		run.Error = err.Error()
		if ctx.Err() != nil {
			run.Error = fmt.Sprintf("interrupted (%v); the next run resumes from the cursors: %v", context.Cause(ctx), err)
		}
	case pending:
		run.Status = StatusPartial
	default:
		run.Status = StatusSucceeded
	}
	if werr := writeRun(cctx, s.CH, workspaceID, appID, run); werr != nil {
		err = errors.Join(err, werr)
	}
	// After the final row: a reader never sees a running row without its progress on a clean end.
	// A failed delete leaves a key that expires on its own and is shown with no ended run.
	if s.Progress != nil {
		if cerr := s.Progress.Clear(cctx, workspaceID, appID, run.RunID); cerr != nil {
			log.Warn("sync progress not cleared; it expires on its own", "err", cerr)
		}
	}
	s.Metrics.run(run.Trigger, run.Status, time.Since(began))
	attrs := []any{"status", run.Status, "transactions", run.TransactionsCount, "events", run.EventsCount,
		"truncated", run.Truncated, "seconds", time.Since(began).Seconds()}
	if err != nil {
		log.Warn("sync run ended", append(attrs, "err", err)...)
	} else {
		log.Info("sync run ended", attrs...)
	}
	return run, err
}

// walk runs the walks in order; pending reports a backward walk left unfinished by the budget.
func (s *Syncer) walk(ctx context.Context, ws, app string, run *schemas.SyncRun, tr *tracker) (pending bool, err error) {
	end := s.now().Truncate(time.Second)
	for i, stream := range []string{StreamTransactions, StreamLifecycleEvents} {
		n, err := s.forward(ctx, ws, app, stream, end, walkCtx{tr, i + 1})
		count(run, stream, n)
		if err != nil {
			return false, fmt.Errorf("%s: %w", stream, err)
		}
	}
	budget := newBudget(s.BackfillBudget)
	for i, stream := range []string{StreamLifecycleEvents, StreamTransactions} {
		n, done, err := s.backward(ctx, ws, app, stream, budget, walkCtx{tr, i + 3})
		count(run, stream, n)
		if err != nil {
			return false, fmt.Errorf("%s backfill: %w", stream, err)
		}
		pending = pending || !done
	}
	return pending, nil
}

func count(run *schemas.SyncRun, stream string, n uint64) {
	if stream == StreamTransactions {
		run.TransactionsCount += n
	} else {
		run.EventsCount += n
	}
}

// walkCtx is a walk's place in its run's progress.
type walkCtx struct {
	tr   *tracker
	step int
}

func newRunID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// forward walks one stream from its forward cursor (less the overlap) to end, in windows, and
// returns how many records it produced. On an app's first run it starts at now − InitialWindow
// and records that instant as the backward edge in the `:start` cursor.
func (s *Syncer) forward(ctx context.Context, ws, app, stream string, end time.Time, wc walkCtx) (uint64, error) {
	cur, ok, err := s.readCursor(ctx, ws, app, stream)
	if err != nil {
		return 0, err
	}
	st, stOK, err := s.readCursor(ctx, ws, app, stream+startSuffix)
	if err != nil {
		return 0, err
	}
	if !ok {
		cur = cursor{WindowEnd: end.Add(-s.initialWindow()).Truncate(24 * time.Hour)}
		if err := s.writeCursor(ctx, ws, app, stream, cur); err != nil {
			return 0, err
		}
	}
	if !stOK {
		// Nothing before the forward walk's start is loaded yet.
		st = cursor{WindowEnd: cur.WindowEnd}
		if err := s.writeCursor(ctx, ws, app, stream+startSuffix, st); err != nil {
			return 0, err
		}
	}
	// Coverage never moves back: while the overlap is re-read, the row keeps the old forward edge.
	edge := cur.WindowEnd
	from, after := cur.WindowEnd, cur.Cursor
	if s.Overlap > 0 && ok {
		from, after = cur.WindowEnd.Add(-s.Overlap), ""
		if from.Before(st.WindowEnd) {
			from = st.WindowEnd
		}
	}
	wc.tr.walk(wc.step, stream, "forward", from, end)
	var n uint64
	for wStart := from; wStart.Before(end); {
		wEnd := earliest(wStart.Add(s.window()), end)
		for {
			p, err := s.forwardPage(ctx, ws, app, stream, wStart, wEnd, after)
			if err != nil {
				return n, err
			}
			k, err := s.produce(ctx, stream, "forward", p.items)
			n += k
			if err != nil {
				return n, err
			}
			var reached time.Time
			if len(p.items) > 0 {
				after = p.last().cursor
				// Loaded without gaps through the second before the last record (later records of
				// that same second are reached through the cursor).
				reached = latest(p.last().at.Truncate(time.Second).Add(-time.Second), wStart.Truncate(time.Second))
				through := latest(reached, edge)
				if err := s.writeCursor(ctx, ws, app, stream, cursor{Cursor: after, WindowEnd: through}); err != nil {
					return n, err
				}
			}
			// Progress shows the walk's own instant, which trails the coverage edge while the
			// overlap is re-read.
			wc.tr.page(k, reached)
			if !p.more {
				break
			}
		}
		if err := s.writeCursor(ctx, ws, app, stream, cursor{Cursor: after, WindowEnd: latest(wEnd.Truncate(time.Second), edge)}); err != nil {
			return n, err
		}
		wc.tr.reach(wEnd)
		s.log().Debug("sync window loaded", "app_id", app, "stream", stream, "walk", "forward", "from", wStart, "to", wEnd)
		wStart = wEnd
	}
	return n, nil
}

// firstRecordAt returns the time of the app's oldest record of the stream the API still serves.
func (s *Syncer) firstRecordAt(ctx context.Context, app, stream string) (time.Time, bool, error) {
	if stream == StreamTransactions {
		p, err := s.Client.Transactions(ctx, s.platformApp(app), time.Time{}, time.Time{}, 1, "")
		if err != nil || len(p.Nodes) == 0 {
			return time.Time{}, false, err
		}
		return p.Nodes[0].CreatedAt.UTC().Truncate(time.Second), true, nil
	}
	p, err := s.Client.Events(ctx, s.platformApp(app), time.Time{}, time.Time{}, 1, "")
	if err != nil || len(p.Nodes) == 0 {
		return time.Time{}, false, err
	}
	return p.Nodes[0].OccurredAt.UTC().Truncate(time.Second), true, nil
}
