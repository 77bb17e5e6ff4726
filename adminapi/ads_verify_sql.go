package adminapi

// Queries of the verification order. Existence and latest times need no de-duplication of the
// ReplacingMergeTree tables (a duplicate changes neither); the upload queue's states do, so its
// rows are read at their latest version (argMax by version, as the uploader does).
const (
	// verifyPageViews: the last page view of each mapped tracking source.
	verifyPageViews = `SELECT source_id, max(occurred_at) FROM browser_events
WHERE workspace_id = ? AND has(?, source_id) AND name = 'page_view'
GROUP BY source_id`

	// verifyServerEvents: the last server event of each name of each mapped tracking source.
	verifyServerEvents = `SELECT source_id, toString(name), max(occurred_at) FROM server_events
WHERE workspace_id = ? AND has(?, source_id)
GROUP BY source_id, name`

	// verifyQueue: per mapping, the latest row with click evidence (its status and reason codes),
	// the latest validated row and the latest accepted row (with its diagnostics status), and how
	// many rows arrived unattributed. "Latest" is by the row's creation, then by its event's time,
	// then by row ID: rows are created by the second, and a tie must be decided by the data, not by
	// the order rows are read in (which differs between one node and a cluster's shards) nor by the
	// row IDs alone (drawn at random, so two deployments of the same events would pick differently).
	verifyQueue = `SELECT mapping_id,
countIf(v_click) AS click_rows,
argMaxIf(row_id, v_order, v_click), argMaxIf(v_status, v_order, v_click), argMaxIf(v_reasons, v_order, v_click), maxIf(v_created, v_click),
countIf(v_status = 'validated') AS validated_rows, argMaxIf(row_id, v_order, v_status = 'validated'), maxIf(v_created, v_status = 'validated'),
countIf(v_status = 'accepted') AS accepted_rows, argMaxIf(row_id, v_order, v_status = 'accepted'), maxIf(v_created, v_status = 'accepted'),
argMaxIf(v_diagnostics, v_order, v_status = 'accepted'),
countIf(v_status = 'unattributed') AS unattributed_rows
FROM (
SELECT mapping_id, row_id, toString(argMax(click_id_type, version)) != '' AS v_click, toString(argMax(status, version)) AS v_status,
argMax(reason_codes, version) AS v_reasons, min(created_at) AS v_created, argMax(diagnostics_status, version) AS v_diagnostics,
concat(toString(toUInt32(v_created)), toString(toUInt32(any(event_time))), row_id) AS v_order
FROM upload_queue WHERE workspace_id = ?
GROUP BY mapping_id, row_id)
GROUP BY mapping_id`
)
