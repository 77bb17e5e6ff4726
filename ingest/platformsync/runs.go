package platformsync

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/schemas"
)

// Querier is the part of a ClickHouse connection the run reader needs.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
}

// runs reads the writer's own view of sync_runs: what it needs to start a run. Readers of runs (the
// admin API, the MCP list_sync_runs tool, the CLI) read them through query/syncruns.
type runs struct{ CH Querier }

// Running returns the app's runs still marked running.
func (r runs) Running(ctx context.Context, workspaceID, appID string) ([]schemas.SyncRun, error) {
	rows, err := r.CH.Query(ctx, selectRunning, workspaceID, appID)
	if err != nil {
		return nil, fmt.Errorf("read sync runs: %w", err)
	}
	defer rows.Close()
	var out []schemas.SyncRun
	for rows.Next() {
		var run schemas.SyncRun
		var trunc uint8
		if err := rows.Scan(&run.RunID, &run.Trigger, &run.Status, &run.StartedAt, &run.FinishedAt, &run.EventsCount,
			&run.TransactionsCount, &run.CoverageFrom, &run.CoverageThrough, &trunc, &run.Error); err != nil {
			return nil, fmt.Errorf("read sync runs: %w", err)
		}
		run.Truncated = trunc == 1
		run.StartedAt = run.StartedAt.UTC()
		for _, t := range []**time.Time{&run.FinishedAt, &run.CoverageFrom, &run.CoverageThrough} {
			if *t != nil {
				u := (*t).UTC()
				*t = &u
			}
		}
		out = append(out, run)
	}
	return out, rows.Err()
}

// LastStarted returns when the app's latest run started (ok false: never).
func (r runs) LastStarted(ctx context.Context, workspaceID, appID string) (t time.Time, ok bool, err error) {
	var n uint64
	if err := r.CH.QueryRow(ctx, selectLastStarted, workspaceID, appID).Scan(&n, &t); err != nil {
		return t, false, fmt.Errorf("read sync runs: %w", err)
	}
	return t.UTC(), n > 0, nil
}
