package mcp

import (
	"context"

	"github.com/revtrack/revtrack/query/syncruns"
)

// SyncRunReader reads sync runs (query/syncruns.Store, the read side of sync_runs, which the admin
// API and the CLI read through too).
type SyncRunReader interface {
	// List returns an app's latest runs, newest first, at most limit.
	List(ctx context.Context, workspaceID, appID string, limit int) ([]syncruns.RunRecord, error)
}

var _ SyncRunReader = syncruns.Store{}

// SyncRuns is the sync-run reader over a ClickHouse connection.
func SyncRuns(ch syncruns.Querier) SyncRunReader { return syncruns.Store{CH: ch} }
