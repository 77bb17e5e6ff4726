-- List, every filter; args [ws-1 m-1 2026-11-01 00:00:00 +0000 UTC 2026-12-01 00:00:00 +0000 UTC rejected 2026-11-01 01:00:00 +0000 UTC 2026-11-01 01:00:00 +0000 UTC uq_x 11]
SELECT row_id, workspace_id, mapping_id, argMax(source_id, version), argMax(event_id_hash, version),
argMax(transaction_id, version), argMax(milestone, version), argMax(acquisition_id, version),
toString(argMax(click_id_type, version)), argMax(click_id, version), argMax(event_time, version), any(value_cents),
argMax(currency, version), toString(argMax(status, version)) AS l_status, argMax(validation_only, version),
argMax(attempts, version), argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next,
argMax(request_id, version) AS l_request, argMax(reason_codes, version), argMax(message, version),
min(created_at) AS l_created, max(updated_at), max(version), argMax(poll_attempts, version),
argMax(diagnostics_status, version), argMax(conversion_customer_id, version), argMax(login_customer_id, version),
argMax(conversion_action_id, version), argMax(request_events, version)
FROM upload_queue WHERE workspace_id = ? AND mapping_id = ? AND created_at >= ? AND created_at < ? GROUP BY workspace_id, mapping_id, row_id HAVING 1 AND l_status = ? AND (l_created < ? OR l_created = ? AND row_id < ?) ORDER BY l_created DESC, row_id DESC LIMIT ?;

-- due rows
SELECT row_id, workspace_id, mapping_id, argMax(source_id, version), argMax(event_id_hash, version),
argMax(transaction_id, version), argMax(milestone, version), argMax(acquisition_id, version),
toString(argMax(click_id_type, version)), argMax(click_id, version), argMax(event_time, version), any(value_cents),
argMax(currency, version), toString(argMax(status, version)) AS l_status, argMax(validation_only, version),
argMax(attempts, version), argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next,
argMax(request_id, version) AS l_request, argMax(reason_codes, version), argMax(message, version),
min(created_at) AS l_created, max(updated_at), max(version), argMax(poll_attempts, version),
argMax(diagnostics_status, version), argMax(conversion_customer_id, version), argMax(login_customer_id, version),
argMax(conversion_action_id, version), argMax(request_events, version)
FROM upload_queue WHERE workspace_id = ? GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'queued' AND l_next <= ? OR l_status = 'retrying' AND l_request = '' AND l_next <= ?)
ORDER BY mapping_id, l_created, row_id LIMIT ? BY mapping_id;

-- poll rows
SELECT row_id, workspace_id, mapping_id, argMax(source_id, version), argMax(event_id_hash, version),
argMax(transaction_id, version), argMax(milestone, version), argMax(acquisition_id, version),
toString(argMax(click_id_type, version)), argMax(click_id, version), argMax(event_time, version), any(value_cents),
argMax(currency, version), toString(argMax(status, version)) AS l_status, argMax(validation_only, version),
argMax(attempts, version), argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next,
argMax(request_id, version) AS l_request, argMax(reason_codes, version), argMax(message, version),
min(created_at) AS l_created, max(updated_at), max(version), argMax(poll_attempts, version),
argMax(diagnostics_status, version), argMax(conversion_customer_id, version), argMax(login_customer_id, version),
argMax(conversion_action_id, version), argMax(request_events, version)
FROM upload_queue WHERE workspace_id = ? GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'accepted' OR l_status = 'retrying' AND l_request != '') AND toUInt32(l_next) > 0 AND l_next <= ?
ORDER BY l_next, l_request, row_id LIMIT ?;

-- existing rows
SELECT DISTINCT row_id FROM upload_queue WHERE workspace_id = ? AND row_id IN (?);

-- dispatch schedule
SELECT workspace_id, min(l_next) FROM (SELECT workspace_id, toString(argMax(status, version)) AS l_status,
argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next, argMax(request_id, version) AS l_request
FROM upload_queue GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'queued' OR l_status = 'retrying' AND l_request = '')) GROUP BY workspace_id ORDER BY workspace_id;

-- dispatch schedule of a workspace
SELECT workspace_id, min(l_next) FROM (SELECT workspace_id, toString(argMax(status, version)) AS l_status,
argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next, argMax(request_id, version) AS l_request
FROM upload_queue WHERE workspace_id = ? GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'queued' OR l_status = 'retrying' AND l_request = '')) GROUP BY workspace_id ORDER BY workspace_id;

-- poll schedule
SELECT workspace_id, min(l_next) FROM (SELECT workspace_id, toString(argMax(status, version)) AS l_status,
argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next, argMax(request_id, version) AS l_request
FROM upload_queue GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'accepted' OR l_status = 'retrying' AND l_request != '') AND toUInt32(l_next) > 0) GROUP BY workspace_id ORDER BY workspace_id;

-- poll schedule of a workspace
SELECT workspace_id, min(l_next) FROM (SELECT workspace_id, toString(argMax(status, version)) AS l_status,
argMax(ifNull(next_attempt_at, toDateTime(0, 'UTC')), version) AS l_next, argMax(request_id, version) AS l_request
FROM upload_queue WHERE workspace_id = ? GROUP BY workspace_id, mapping_id, row_id HAVING (l_status = 'accepted' OR l_status = 'retrying' AND l_request != '') AND toUInt32(l_next) > 0) GROUP BY workspace_id ORDER BY workspace_id;

