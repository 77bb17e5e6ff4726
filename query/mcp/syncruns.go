package mcp

import (
	"context"

	"github.com/revtrack/revtrack/ingest/platformsync"
)

// SyncRunReader reads sync runs (ingest/platformsync.Runs, the one reader of sync_runs, which the
// admin API and the CLI use too).
type SyncRunReader interface {
	// List returns an app's latest runs, newest first, at most limit.
	List(ctx context.Context, workspaceID, appID string, limit int) ([]platformsync.RunRecord, error)
}

var _ SyncRunReader = platformsync.Runs{}

// SyncRuns is the sync-run reader over a ClickHouse connection.
func SyncRuns(ch platformsync.Querier) SyncRunReader { return platformsync.Runs{CH: ch} }
