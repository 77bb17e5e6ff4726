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

// RunRecord is one sync run as the admin API and the list_sync_runs tool show it. Coverage is the
// transaction stream's after the run (docs/METRICS.md 7.1); null fields are not known (yet).
type RunRecord struct {
	RunID             string     `json:"runId"`
	AppID             string     `json:"appId"`
	Trigger           string     `json:"trigger"`
	Status            string     `json:"status"`
	StartedAt         time.Time  `json:"startedAt"`
	FinishedAt        *time.Time `json:"finishedAt"`
	EventsCount       uint64     `json:"eventsCount"`
	TransactionsCount uint64     `json:"transactionsCount"`
	CoverageFrom      *time.Time `json:"coverageFrom"`
	CoverageThrough   *time.Time `json:"coverageThrough"`
	Truncated         bool       `json:"truncated"`
	Error             string     `json:"error"`
}

// SyncRun returns the record as the sync's own type.
func (r RunRecord) SyncRun() schemas.SyncRun {
	return schemas.SyncRun{RunID: r.RunID, Trigger: r.Trigger, Status: r.Status, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		EventsCount: r.EventsCount, TransactionsCount: r.TransactionsCount, CoverageFrom: r.CoverageFrom,
		CoverageThrough: r.CoverageThrough, Truncated: r.Truncated, Error: r.Error}
}

func recordOf(app string, r schemas.SyncRun) RunRecord {
	return RunRecord{RunID: r.RunID, AppID: app, Trigger: r.Trigger, Status: r.Status, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		EventsCount: r.EventsCount, TransactionsCount: r.TransactionsCount, CoverageFrom: r.CoverageFrom,
		CoverageThrough: r.CoverageThrough, Truncated: r.Truncated, Error: r.Error}
}

// Runs reads sync_runs. It is the one read of runs: the admin API, the CLI and the MCP
// list_sync_runs tool all use it.
type Runs struct{ CH Querier }

// MaxRunsLimit bounds one List.
const MaxRunsLimit = 500

// List returns the workspace's latest runs, newest first: of one app, or of every app when appID
// is "". limit is clamped to 1..MaxRunsLimit.
func (r Runs) List(ctx context.Context, workspaceID, appID string, limit int) ([]RunRecord, error) {
	limit = min(max(limit, 1), MaxRunsLimit)
	return r.query(ctx, selectRuns, workspaceID, appID, appID, limit)
}

// Running returns the app's runs still marked running.
func (r Runs) Running(ctx context.Context, workspaceID, appID string) ([]RunRecord, error) {
	return r.query(ctx, selectRunning, workspaceID, appID)
}

// LastStarted returns when the app's latest run started (ok false: never).
func (r Runs) LastStarted(ctx context.Context, workspaceID, appID string) (t time.Time, ok bool, err error) {
	var n uint64
	if err := r.CH.QueryRow(ctx, selectLastStarted, workspaceID, appID).Scan(&n, &t); err != nil {
		return t, false, fmt.Errorf("read sync runs: %w", err)
	}
	return t.UTC(), n > 0, nil
}

func (r Runs) query(ctx context.Context, q string, args ...any) ([]RunRecord, error) {
	rows, err := r.CH.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read sync runs: %w", err)
	}
	defer rows.Close()
	out := []RunRecord{}
	for rows.Next() {
		var rec RunRecord
		var trunc uint8
		if err := rows.Scan(&rec.RunID, &rec.AppID, &rec.Trigger, &rec.Status, &rec.StartedAt, &rec.FinishedAt, &rec.EventsCount,
			&rec.TransactionsCount, &rec.CoverageFrom, &rec.CoverageThrough, &trunc, &rec.Error); err != nil {
			return nil, fmt.Errorf("read sync runs: %w", err)
		}
		rec.Truncated = trunc == 1
		rec.StartedAt = rec.StartedAt.UTC()
		for _, t := range []**time.Time{&rec.FinishedAt, &rec.CoverageFrom, &rec.CoverageThrough} {
			if *t != nil {
				u := (*t).UTC()
				*t = &u
			}
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}
