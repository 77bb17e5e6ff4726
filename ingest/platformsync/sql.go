package platformsync

// SQL of the sync. Inserts go through PrepareBatch with explicit columns (INSERT … VALUES via Exec
// hangs on 18.16). sync_runs is small (one row per run plus its updates), so its reads use FINAL.
const (
	selectCursor = `SELECT cursor, window_end FROM sync_cursors WHERE workspace_id = ? AND app_id = ? AND stream = ?
ORDER BY version DESC LIMIT 1`
	insertCursor   = `INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)`
	insertSyncRuns = `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at,
events_count, transactions_count, coverage_from, coverage_through, truncated, error, version)`

	// selectRunning finds an app's runs still marked running (their process stopped if the caller
	// holds the app's lock). Readers list runs through query/syncruns.
	selectRunning = `SELECT run_id, toString(trigger), toString(status), started_at, finished_at, events_count,
transactions_count, coverage_from, coverage_through, truncated, error
FROM sync_runs FINAL
WHERE workspace_id = ? AND app_id = ? AND status = 'running'`
	// selectLastStarted is the start of the app's latest run (no de-duplication needed: every
	// version of a run row carries the same started_at).
	selectLastStarted = `SELECT count(), max(started_at) FROM sync_runs WHERE workspace_id = ? AND app_id = ?`
)

// Queries lists the package's SQL whose placeholders all take strings (processors' compatibility
// test binds them as 'x'); compat_test.go checks every statement.
func Queries() []string {
	return []string{selectCursor, insertCursor, insertSyncRuns, selectRunning, selectLastStarted}
}
