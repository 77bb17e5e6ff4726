package processors

// SQL of the sessionizer. Column lists are explicit (required by the driver) and in the order the
// row functions return values. Input is only ever bound with the driver's client-side `?` binding.
const (
	insertSessions = `INSERT INTO sessions (session_id, source_id, workspace_id, acquisition_id, started_at,
last_event_at, event_count, page_view_count, entry_url, exit_url, referrer, returning, version)`

	insertSessionState = `INSERT INTO session_state (source_id, acquisition_id, workspace_id, session_id, started_at,
started_ms, last_event_at, last_event_ms, event_count, page_view_count, entry_url, exit_url, referrer, returning,
session_ordinal, seen_event_hashes, version)`

	// selectSessionStates loads the latest state of the browsers bound as a list of
	// (source_id, acquisition_id) tuples. The highest version wins, whether or not the rows were merged
	// yet and whichever monthly partition they are in. No FINAL, window function or CTE: 18.16 and
	// current ClickHouse both run it.
	selectSessionStates = `SELECT source_id, acquisition_id, workspace_id, session_id, started_at, started_ms,
last_event_at, last_event_ms, event_count, page_view_count, entry_url, exit_url, referrer, returning,
session_ordinal, seen_event_hashes, version
FROM session_state
WHERE (source_id, acquisition_id) IN (?)
ORDER BY source_id, acquisition_id, version DESC
LIMIT 1 BY source_id, acquisition_id`
)
