package main

// SQL of the benchmark; it only reads. A queue row's state is its latest
// version (argMax by version), as the uploader reads it (uploader/rows_sql.go): the table is a
// ReplacingMergeTree whose merges are not immediate. Aliases differ from column names because
// ClickHouse 18.16 resolves an alias that shadows a column inside its own aggregate.
const (
	// countAcquisitionsSQL counts one pass's acquisitions that reached `acquisitions` (the table the
	// matcher reads click evidence from).
	countAcquisitionsSQL = `SELECT uniqExact(acquisition_id) FROM acquisitions
WHERE workspace_id = ? AND source_id = ? AND acquisition_id LIKE ?`

	// countRowsSQL counts one pass's rows of a mapping in the queue, and those whose latest state is
	// the given one.
	countRowsSQL = `SELECT count(), countIf(l_status = ?) FROM (
    SELECT row_id, toString(argMax(status, version)) AS l_status
    FROM upload_queue
    WHERE workspace_id = ? AND mapping_id = ? AND acquisition_id LIKE ?
    GROUP BY row_id
)`

	// rowStatesSQL reads the latest state of the given rows (those that exist). The IDs are bound as
	// a clickhouse.GroupSet, a set ClickHouse looks rows up in by hash: has(array, row_id) compares
	// every row of the workspace with every ID, about 20 times slower at 1,000 IDs over 80,000 rows.
	rowStatesSQL = `SELECT row_id, toString(argMax(status, version)) AS l_status
FROM upload_queue
WHERE workspace_id = ? AND row_id IN ?
GROUP BY row_id`

	// activePartsSQL counts upload_queue's active parts. Every single-row insert (one per live
	// request) makes a part; when a partition holds more than parts_to_delay_insert (150 by
	// default) ClickHouse delays every further insert until merges catch up.
	activePartsSQL = `SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'upload_queue' AND active`
)
