package uploader

// Queries of the upload queue. A row's state is its latest version: argMax(col, version) grouped
// by row (the table is a ReplacingMergeTree, but merges are not immediate and FINAL is slow).
// next_attempt_at goes through ifNull because aggregate functions skip NULLs: a plain argMax would
// return an older, non-NULL schedule. Epoch 0 stands for "nothing scheduled".
const (
	insertRow = `INSERT INTO upload_queue (row_id, workspace_id, mapping_id, source_id, event_id_hash, transaction_id,
milestone, acquisition_id, click_id_type, click_id, event_time, value_cents, currency, status, validation_only, attempts,
next_attempt_at, request_id, reason_codes, message, created_at, updated_at, version, poll_attempts, diagnostics_status,
conversion_customer_id, login_customer_id, conversion_action_id, request_events)`

	// selectExistingRows names the rows of a batch that already exist; a redelivered job must not
	// reset a row that moved on. No de-duplication: existence is enough. The IDs are bound as a list
	// of one-value clickhouse.GroupSet (idSet), rendered `(('a'), ('b'), …)`: a set ClickHouse looks
	// rows up in by hash. `has(?, row_id)` with a bound array gives the same rows, but ClickHouse
	// 18.16 scans the array for every row: 0.9–1.7 s instead of 53–85 ms for 1,000 IDs against
	// 80,000 row versions.
	selectExistingRows = `SELECT DISTINCT row_id FROM upload_queue WHERE workspace_id = ? AND row_id IN (?)`

	// selectLatestRows reads the latest version of rows; callers append WHERE, the grouping and a HAVING.
	selectLatestRows = `SELECT row_id, workspace_id, mapping_id, argMax(source_id, version), argMax(event_id_hash, version),
argMax(transaction_id, version), argMax(milestone, version), argMax(acquisition_id, version),
toString(argMax(click_id_type, version)), argMax(click_id, version), argMax(event_time, version), any(value_cents),
argMax(currency, version), toString(argMax(status, version)) AS l_status, argMax(validation_only, version),
argMax(attempts, version), argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next,
argMax(request_id, version) AS l_request, argMax(reason_codes, version), argMax(message, version),
min(created_at) AS l_created, max(updated_at), max(version), argMax(poll_attempts, version),
argMax(diagnostics_status, version), argMax(conversion_customer_id, version), argMax(login_customer_id, version),
argMax(conversion_action_id, version), argMax(request_events, version)
FROM upload_queue `
	groupRows = `GROUP BY workspace_id, mapping_id, row_id `

	// Rows the dispatcher sends: queued (unless held back by a schedule), or retrying an ingestion
	// (no request ID) whose time has come; at most ? per mapping, oldest first.
	dueSQL        = `(l_status = 'queued' AND l_next <= ? OR l_status = 'retrying' AND l_request = '' AND l_next <= ?)`
	selectDueRows = selectLatestRows + `WHERE workspace_id = ? ` + groupRows + `HAVING ` + dueSQL + `
ORDER BY mapping_id, l_created, row_id LIMIT ? BY mapping_id`

	// Rows whose diagnostics are due: accepted, or retrying a failed poll (they hold a request ID).
	pollSQL        = pollableSQL + ` AND l_next <= ?`
	selectPollRows = selectLatestRows + `WHERE workspace_id = ? ` + groupRows + `HAVING ` + pollSQL + `
ORDER BY l_next, l_request, row_id LIMIT ?`

	// Rows still waiting for diagnostics, due or not (the connection is gone: poll.go's unknown).
	selectPollPendingRows = selectLatestRows + `WHERE workspace_id = ? ` + groupRows + `HAVING ` + pollableSQL + `
ORDER BY l_next, l_request, row_id LIMIT ?`

	// The schedules behind the due hints (due_hints.go): per workspace, the earliest l_next of the
	// rows the dispatcher will send (epoch 0: due now) or whose diagnostics the poller will fetch,
	// whatever the time. A workspace without such rows has no row. The whole-table forms rebuild
	// the hints every dueRescanInterval; the one-workspace forms settle a workspace after its pass.
	dispatchableSQL = `(l_status = 'queued' OR l_status = 'retrying' AND l_request = '')`
	pollableSQL     = `(l_status = 'accepted' OR l_status = 'retrying' AND l_request != '') AND toUInt32(l_next) > 0`
	scheduleRows    = `SELECT workspace_id, min(l_next) FROM (SELECT workspace_id, toString(argMax(status, version)) AS l_status,
argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next, argMax(request_id, version) AS l_request
FROM upload_queue `
	scheduleEnd = `) GROUP BY workspace_id ORDER BY workspace_id`

	selectDispatchSchedule   = scheduleRows + groupRows + `HAVING ` + dispatchableSQL + scheduleEnd
	selectDispatchScheduleOf = scheduleRows + `WHERE workspace_id = ? ` + groupRows + `HAVING ` + dispatchableSQL + scheduleEnd
	selectPollSchedule       = scheduleRows + groupRows + `HAVING ` + pollableSQL + scheduleEnd
	selectPollScheduleOf     = scheduleRows + `WHERE workspace_id = ? ` + groupRows + `HAVING ` + pollableSQL + scheduleEnd

	selectRow = selectLatestRows + `WHERE workspace_id = ? AND row_id = ? ` + groupRows
)

// List: optional filters are fixed fragments appended in a fixed order (list.go binds them).
const (
	listWhere         = `WHERE workspace_id = ? `
	listWhereMapping  = `AND mapping_id = ? `
	listWhereFrom     = `AND created_at >= ? `
	listWhereTo       = `AND created_at < ? `
	listHaving        = `HAVING 1 `
	listHavingStatus  = `AND l_status = ? `
	listHavingCursor  = `AND (l_created < ? OR l_created = ? AND row_id < ?) `
	listOrderAndLimit = `ORDER BY l_created DESC, row_id DESC LIMIT ?`
)
