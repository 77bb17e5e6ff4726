package syncruns

// selectRuns lists a workspace's runs, newest first; an empty app ID means every app. sync_runs is
// small (one row per run plus its updates), so the read uses FINAL to see each run's latest version.
const selectRuns = `SELECT run_id, app_id, toString(trigger), toString(status), started_at, finished_at, events_count,
transactions_count, coverage_from, coverage_through, truncated, error
FROM sync_runs FINAL
WHERE workspace_id = ? AND (? = '' OR app_id = ?)
ORDER BY started_at DESC, run_id DESC
LIMIT ?`
