package platformsync

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// Streams this slice syncs (docs/METRICS.md 7.1). usage_charges is not walked yet.
const (
	StreamTransactions    = "transactions"
	StreamLifecycleEvents = "lifecycle_events"
	startSuffix           = ":start"
)

// Values of a `<stream>:start` cursor once its backward walk has ended for good.
const (
	// CursorOrigin: the backward walk reached the app's first record.
	CursorOrigin = "origin"
	// CursorRowLimit: the transactions backward walk loaded the row limit and stopped.
	CursorRowLimit = "row_limit"
)

// Run statuses (sync_runs.status).
const (
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusPartial   = "partial"
)

// Run triggers (sync_runs.trigger).
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
)

// cursor is one sync_cursors row.
type cursor struct {
	Cursor    string
	WindowEnd time.Time
}

// backfill is the `:start` cursor of a backward walk still in progress: how many stored records
// the walk has loaded (the row limit counts transactions) and the partner API cursor of the oldest
// record loaded in the window being walked ("" at a window boundary). It is stored as JSON.
type backfill struct {
	Loaded uint64 `json:"loaded"`
	Before string `json:"before,omitempty"`
}

// finished reports whether a `:start` cursor value ends the backward walk.
func finished(c string) bool { return c == CursorOrigin || c == CursorRowLimit }

func parseBackfill(c string) backfill {
	var b backfill
	if c == "" {
		return b
	}
	if json.Unmarshal([]byte(c), &b) != nil {
		// Not ours: the bare partner API cursor of an older walk.
		return backfill{Before: c}
	}
	return b
}

func (b backfill) String() string {
	out, _ := json.Marshal(b)
	return string(out)
}

// versions stamps cursor and run rows: strictly increasing microseconds across the process, so a
// later row always replaces an earlier one even when two are written in the same microsecond.
var versions struct {
	sync.Mutex
	last uint64
}

func nextVersion() uint64 {
	versions.Lock()
	defer versions.Unlock()
	v := uint64(time.Now().UnixMicro())
	if v <= versions.last {
		v = versions.last + 1
	}
	versions.last = v
	return v
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
	if err := b.Append(ws, app, stream, c.Cursor, c.WindowEnd.UTC(), nextVersion()); err != nil {
		_ = b.Abort()
		return fmt.Errorf("write cursor %s: %w", stream, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("write cursor %s: %w", stream, err)
	}
	return nil
}

// writeRun writes a version of a sync_runs row (the last one written wins).
func writeRun(ctx context.Context, conn Conn, ws, app string, r schemas.SyncRun) error {
	b, err := conn.PrepareBatch(ctx, insertSyncRuns)
	if err != nil {
		return fmt.Errorf("write sync run: %w", err)
	}
	var trunc uint8
	if r.Truncated {
		trunc = 1
	}
	if err := b.Append(r.RunID, ws, app, r.Trigger, r.Status, r.StartedAt.UTC(), r.FinishedAt, r.EventsCount,
		r.TransactionsCount, r.CoverageFrom, r.CoverageThrough, trunc, r.Error, nextVersion()); err != nil {
		_ = b.Abort()
		return fmt.Errorf("write sync run: %w", err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("write sync run: %w", err)
	}
	return nil
}
