// Package syncruns is the read side of the sync_runs table: the platform sync runs as the admin API
// (GET /api/admin/sync-runs), the MCP list_sync_runs tool and `revtrack admin sync runs` show them
// (docs/PLATFORM_SYNC.md). The platform sync (ingest/platformsync) writes the table; readers read it
// here, so that none of them imports the writer.
package syncruns

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

// Querier is the part of a ClickHouse connection the store needs.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// Live is the part of a Redis client that reads running runs' progress (redisx.MGet: the keys of a
// workspace's runs are in several slots of a Redis Cluster).
type Live = redisx.Getter

var _ Live = (redis.UniversalClient)(nil)

// RunRecord is one sync run as the admin API and the list_sync_runs tool show it. Coverage is the
// transaction stream's after the run (docs/METRICS.md 7.1); null fields are not known (yet).
// Progress is the live progress of a running run, published by the process running it; null for
// ended runs and for a running run whose process has stopped publishing (docs/PLATFORM_SYNC.md).
type RunRecord struct {
	RunID             string                `json:"runId"`
	AppID             string                `json:"appId"`
	Trigger           string                `json:"trigger"`
	Status            string                `json:"status"`
	StartedAt         time.Time             `json:"startedAt"`
	FinishedAt        *time.Time            `json:"finishedAt"`
	EventsCount       uint64                `json:"eventsCount"`
	TransactionsCount uint64                `json:"transactionsCount"`
	CoverageFrom      *time.Time            `json:"coverageFrom"`
	CoverageThrough   *time.Time            `json:"coverageThrough"`
	Truncated         bool                  `json:"truncated"`
	Error             string                `json:"error"`
	Progress          *schemas.SyncProgress `json:"progress"`
}

// Record is the record of a run the sync has just written (the admin API answers a started run
// with it, in the shape List reads it back).
func Record(appID string, r schemas.SyncRun) RunRecord {
	return RunRecord{RunID: r.RunID, AppID: appID, Trigger: r.Trigger, Status: r.Status, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		EventsCount: r.EventsCount, TransactionsCount: r.TransactionsCount, CoverageFrom: r.CoverageFrom,
		CoverageThrough: r.CoverageThrough, Truncated: r.Truncated, Error: r.Error}
}

// MaxRunsLimit bounds one List.
const MaxRunsLimit = 500

// Store reads sync_runs and, for running runs, their progress in Redis (nil Live: none shown).
type Store struct {
	CH Querier
	// Live and Prefix: where the sync publishes progress (the deployment's Redis key prefix).
	Live   Live
	Prefix string
	Log    *slog.Logger
}

// List returns the workspace's latest runs, newest first: of one app, or of every app when appID
// is "". limit is clamped to 1..MaxRunsLimit.
func (s Store) List(ctx context.Context, workspaceID, appID string, limit int) ([]RunRecord, error) {
	limit = min(max(limit, 1), MaxRunsLimit)
	rows, err := s.CH.Query(ctx, selectRuns, workspaceID, appID, appID, limit)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sync runs: %w", err)
	}
	s.attachProgress(ctx, workspaceID, out)
	return out, nil
}

// attachProgress reads the progress of the running runs in one round trip. Progress is a view of a
// run the table already describes, so a Redis failure leaves it null (logged) rather than failing
// the list.
func (s Store) attachProgress(ctx context.Context, workspaceID string, runs []RunRecord) {
	if s.Live == nil {
		return
	}
	var keys []string
	var at []int
	for i, r := range runs {
		if r.Status == "running" {
			keys = append(keys, schemas.SyncProgressKey(s.Prefix, workspaceID, r.AppID, r.RunID))
			at = append(at, i)
		}
	}
	if len(keys) == 0 {
		return
	}
	vals, err := redisx.MGet(ctx, s.Live, keys...)
	if err != nil {
		s.log().Warn("sync progress not read; running runs shown without it", "err", err)
		return
	}
	for j, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // no key: the run's process is not publishing (ended, stopped, or not yet)
		}
		var p schemas.SyncProgress
		if err := json.Unmarshal([]byte(str), &p); err != nil {
			s.log().Warn("sync progress unreadable", "key", keys[j], "err", err)
			continue
		}
		runs[at[j]].Progress = &p
	}
}

func (s Store) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
