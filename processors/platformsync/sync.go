package platformsync

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Streams this slice syncs (docs/METRICS.md 7.1). usage_charges is not walked yet.
const (
	StreamTransactions    = "transactions"
	StreamLifecycleEvents = "lifecycle_events"
	startSuffix           = ":start"
	cursorOrigin          = "origin"
)

// SQL of the syncer. Inserts go through PrepareBatch with explicit columns (INSERT … VALUES via Exec
// hangs on 18.16).
const (
	selectCursor = `SELECT cursor, window_end FROM sync_cursors WHERE workspace_id = ? AND app_id = ? AND stream = ?
ORDER BY version DESC LIMIT 1`
	insertCursor   = `INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)`
	insertSyncRuns = `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at,
events_count, transactions_count, coverage_from, coverage_through, truncated, error, version)`
)

// Queries lists every SQL constant of the package, for compatibility checks.
func Queries() []string { return []string{selectCursor, insertCursor, insertSyncRuns} }

// Conn is the part of a ClickHouse connection the syncer needs.
type Conn interface {
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

// Producer is the part of *kgo.Client the syncer needs.
type Producer interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
}

// Syncer runs the forward walk of one app's streams.
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
	Now    func() time.Time
	Log    *slog.Logger

	mu          sync.Mutex
	lastVersion uint64
}

// cursor is one sync_cursors row.
type cursor struct {
	Cursor    string
	WindowEnd time.Time
}

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

// version is a strictly increasing microsecond stamp, so a later row always replaces an earlier one.
func (s *Syncer) version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := uint64(time.Now().UnixMicro())
	if v <= s.lastVersion {
		v = s.lastVersion + 1
	}
	s.lastVersion = v
	return v
}

func (s *Syncer) window() time.Duration {
	if s.Window > 0 {
		return s.Window
	}
	return 30 * 24 * time.Hour
}

func (s *Syncer) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Run syncs one app: for each stream it reads the latest cursor, walks forward from it in explicit
// windows up to now, produces each page to Kafka (ProduceSync) and only then advances the cursor.
// A run that fails (or a process that dies) resumes from the last committed cursor: at most the
// page in flight is produced again, which is harmless because every platform table is a
// ReplacingMergeTree keyed by the platform's IDs.
//
// The partner access token is on s.Client: the caller opens it from the workspace's partner
// connection (internal/controlplane Partners.PartnerConnection), as `revtrack admin sync run` does.
func (s *Syncer) Run(ctx context.Context, workspaceID, appID, trigger string) (schemas.SyncRun, error) {
	run := schemas.SyncRun{RunID: newRunID(), Trigger: trigger, Status: "running", StartedAt: s.now().Truncate(time.Second)}
	if err := s.writeRun(ctx, workspaceID, appID, run); err != nil {
		return run, err
	}
	end := s.now()
	var errs []error
	for _, stream := range []string{StreamTransactions, StreamLifecycleEvents} {
		n, err := s.syncStream(ctx, workspaceID, appID, stream, end)
		if stream == StreamTransactions {
			run.TransactionsCount += n
		} else {
			run.EventsCount += n
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", stream, err))
			break
		}
	}
	// Coverage of the transaction stream after the run, read back from the cursors.
	cctx := context.WithoutCancel(ctx)
	if fwd, ok, err := s.readCursor(cctx, workspaceID, appID, StreamTransactions); err == nil && ok {
		t := fwd.WindowEnd
		run.CoverageThrough = &t
	}
	if st, ok, err := s.readCursor(cctx, workspaceID, appID, StreamTransactions+startSuffix); err == nil && ok {
		t := st.WindowEnd
		run.CoverageFrom = &t
		run.Truncated = st.Cursor == "row_limit"
	}
	fin := s.now().Truncate(time.Second)
	run.FinishedAt = &fin
	run.Status = "succeeded"
	err := errors.Join(errs...)
	if err != nil {
		run.Status = "failed"
		run.Error = err.Error()
	}
	if werr := s.writeRun(cctx, workspaceID, appID, run); werr != nil {
		return run, errors.Join(err, werr)
	}
	return run, err
}

func newRunID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// syncStream walks one stream forward to end and returns how many records it produced.
func (s *Syncer) syncStream(ctx context.Context, ws, app, stream string, end time.Time) (uint64, error) {
	cur, ok, err := s.readCursor(ctx, ws, app, stream)
	if err != nil {
		return 0, err
	}
	if !ok {
		// First run: find the app's first record so the walk does not crawl empty windows. The
		// forward walk from there reaches "origin", so the :start cursor records it.
		first, err := s.firstRecordAt(ctx, app, stream)
		if err != nil {
			return 0, err
		}
		if first.IsZero() || first.After(end) {
			first = end
		}
		first = first.Truncate(time.Second)
		if err := s.writeCursor(ctx, ws, app, stream+startSuffix, cursor{Cursor: cursorOrigin, WindowEnd: first}); err != nil {
			return 0, err
		}
		cur = cursor{WindowEnd: first}
	}
	var n uint64
	after := cur.Cursor
	for wStart := cur.WindowEnd; wStart.Before(end); {
		wEnd := wStart.Add(s.window())
		if wEnd.After(end) {
			wEnd = end
		}
		for {
			recs, last, next, hasNext, err := s.fetch(ctx, ws, app, stream, wStart, wEnd, after)
			if err != nil {
				return n, err
			}
			if len(recs) > 0 {
				if err := s.Producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					return n, fmt.Errorf("produce: %w", err)
				}
				n += uint64(len(recs))
			}
			if next != "" {
				after = next
				// Loaded without gaps through the second before the last record (later records of
				// that same second are reached through the cursor).
				through := last.Truncate(time.Second).Add(-time.Second)
				if through.Before(wStart) {
					through = wStart
				}
				if err := s.writeCursor(ctx, ws, app, stream, cursor{Cursor: after, WindowEnd: through}); err != nil {
					return n, err
				}
			}
			if !hasNext {
				break
			}
		}
		if err := s.writeCursor(ctx, ws, app, stream, cursor{Cursor: after, WindowEnd: wEnd.Truncate(time.Second)}); err != nil {
			return n, err
		}
		wStart = wEnd
	}
	return n, nil
}

func (s *Syncer) firstRecordAt(ctx context.Context, app, stream string) (time.Time, error) {
	switch stream {
	case StreamTransactions:
		p, err := s.Client.Transactions(ctx, s.platformApp(app), time.Time{}, time.Time{}, 1, "")
		if err != nil || len(p.Nodes) == 0 {
			return time.Time{}, err
		}
		return p.Nodes[0].CreatedAt, nil
	default:
		p, err := s.Client.Events(ctx, s.platformApp(app), time.Time{}, time.Time{}, 1, "")
		if err != nil || len(p.Nodes) == 0 {
			return time.Time{}, err
		}
		return p.Nodes[0].OccurredAt, nil
	}
}

// fetch reads one page and converts it to Kafka records.
func (s *Syncer) fetch(ctx context.Context, ws, app, stream string, from, to time.Time, after string) (recs []*kgo.Record, last time.Time, next string, hasNext bool, err error) {
	syncedAt := s.now()
	var out []schemas.PlatformRecord
	switch stream {
	case StreamTransactions:
		p, err := s.Client.Transactions(ctx, s.platformApp(app), from, to, 0, after)
		if err != nil {
			return nil, last, "", false, err
		}
		for _, nd := range p.Nodes {
			t, ok, err := convertTransaction(nd)
			if err != nil {
				return nil, last, "", false, fmt.Errorf("transaction %s: %w", nd.ID, err)
			}
			last = nd.CreatedAt
			if ok {
				out = append(out, schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: app, SyncedAt: syncedAt, Transaction: &t})
			}
		}
		next, hasNext = p.Cursor(), p.HasNextPage
	default:
		p, err := s.Client.Events(ctx, s.platformApp(app), from, to, 0, after)
		if err != nil {
			return nil, last, "", false, err
		}
		for _, nd := range p.Nodes {
			e, err := convertEvent(nd)
			if err != nil {
				return nil, last, "", false, fmt.Errorf("event %s at %s: %w", nd.Type, nd.OccurredAt, err)
			}
			last = nd.OccurredAt
			out = append(out, schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: app, SyncedAt: syncedAt, LifecycleEvent: &e})
		}
		next, hasNext = p.Cursor(), p.HasNextPage
	}
	for _, r := range out {
		v, err := json.Marshal(r)
		if err != nil {
			return nil, last, "", false, err
		}
		recs = append(recs, &kgo.Record{Topic: s.Topic, Key: []byte(ws + ":" + app + ":" + customerOf(r)), Value: v})
	}
	return recs, last, next, hasNext, nil
}

func customerOf(r schemas.PlatformRecord) string {
	switch {
	case r.Transaction != nil:
		return r.Transaction.CustomerID
	case r.LifecycleEvent != nil:
		return r.LifecycleEvent.CustomerID
	}
	return ""
}

func (s *Syncer) readCursor(ctx context.Context, ws, app, stream string) (cursor, bool, error) {
	var c cursor
	err := s.CH.QueryRow(ctx, selectCursor, ws, app, stream).Scan(&c.Cursor, &c.WindowEnd)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return c, false, nil
		}
		return c, false, fmt.Errorf("read cursor %s: %w", stream, err)
	}
	c.WindowEnd = c.WindowEnd.UTC()
	return c, true, nil
}

func (s *Syncer) writeCursor(ctx context.Context, ws, app, stream string, c cursor) error {
	b, err := s.CH.PrepareBatch(ctx, insertCursor)
	if err != nil {
		return fmt.Errorf("write cursor %s: %w", stream, err)
	}
	if err := b.Append(ws, app, stream, c.Cursor, c.WindowEnd.UTC(), s.version()); err != nil {
		_ = b.Abort()
		return fmt.Errorf("write cursor %s: %w", stream, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("write cursor %s: %w", stream, err)
	}
	return nil
}

func (s *Syncer) writeRun(ctx context.Context, ws, app string, r schemas.SyncRun) error {
	b, err := s.CH.PrepareBatch(ctx, insertSyncRuns)
	if err != nil {
		return fmt.Errorf("write sync run: %w", err)
	}
	var trunc uint8
	if r.Truncated {
		trunc = 1
	}
	if err := b.Append(r.RunID, ws, app, r.Trigger, r.Status, r.StartedAt.UTC(), r.FinishedAt, r.EventsCount,
		r.TransactionsCount, r.CoverageFrom, r.CoverageThrough, trunc, r.Error, s.version()); err != nil {
		_ = b.Abort()
		return fmt.Errorf("write sync run: %w", err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("write sync run: %w", err)
	}
	return nil
}
