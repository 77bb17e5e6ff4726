package controlplane

// Queries of the control plane. Latest version per key via argMax, tombstones filtered.
const (
	insertWorkspace = `INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids,
created_at, updated_at, version, deleted)`
	selectWorkspaceColumns = `SELECT workspace_id, argMax(slug, version) AS w_slug, argMax(name, version),
toString(argMax(subscription_status, version)), argMax(selected_app_ids, version), min(created_at),
max(updated_at), max(version), argMax(deleted, version) AS del
FROM workspaces `
	selectWorkspaces      = selectWorkspaceColumns + `GROUP BY workspace_id HAVING del = 0 ORDER BY w_slug`
	selectWorkspaceBySlug = selectWorkspaceColumns + `GROUP BY workspace_id HAVING del = 0 AND w_slug = ?`
	selectWorkspaceByID   = selectWorkspaceColumns + `WHERE workspace_id = ? GROUP BY workspace_id HAVING del = 0`

	insertMember  = `INSERT INTO workspace_members (workspace_id, user_id, email, role, created_at, updated_at, version, deleted)`
	selectMembers = `SELECT user_id, argMax(email, version), toString(argMax(role, version)), argMax(deleted, version) AS del
FROM workspace_members WHERE workspace_id = ? GROUP BY user_id HAVING del = 0 ORDER BY user_id`

	insertApp  = `INSERT INTO apps (app_id, platform_app_id, name, created_at, updated_at, version, deleted)`
	selectApps = `SELECT app_id, argMax(platform_app_id, version), argMax(name, version), argMax(deleted, version) AS del
FROM apps GROUP BY app_id HAVING del = 0 ORDER BY app_id`

	insertAPIKey        = `INSERT INTO api_keys (key_id, workspace_id, name, key_hash, created_by, created_at, revoked_at, version, scope)`
	selectAPIKeyColumns = `SELECT key_id, argMax(workspace_id, version), argMax(name, version), argMax(created_by, version),
min(created_at), argMax(revoked_at, version), argMax(key_hash, version), toString(argMax(scope, version)) FROM api_keys `
	selectAPIKeysByWorkspace = selectAPIKeyColumns + `WHERE workspace_id = ? GROUP BY key_id ORDER BY min(created_at), key_id`
	selectAPIKeyByHash       = selectAPIKeyColumns + `WHERE key_hash = ? GROUP BY key_id`
	selectAPIKeyByID         = selectAPIKeyColumns + `WHERE key_id = ? GROUP BY key_id`

	insertAudit = `INSERT INTO audit_log (at, at_ms, audit_id, workspace_id, actor, action, target_type, target_id, details)`
	// selectAudit pages a workspace's entries newest first. Each filter is off when its argument is
	// empty; the time range is Unix seconds [from, to); the cursor is the last entry read,
	// (milliseconds since 1970, audit ID), and the order ends on the audit ID so that entries of one
	// millisecond page stably. Numbers travel as text, read with the OrZero conversions.
	selectAudit = `SELECT at, at_ms, audit_id, workspace_id, actor, action, target_type, target_id, details FROM audit_log
WHERE workspace_id = ? AND (? = '' OR startsWith(action, ?)) AND (? = '' OR actor = ?)
AND at >= toDateTime(toUInt32OrZero(?), 'UTC') AND at < toDateTime(toUInt32OrZero(?), 'UTC')
AND (toUInt64(toUnixTimestamp(at)) * 1000 + at_ms, audit_id) < (toUInt64OrZero(?), ?)
ORDER BY at DESC, at_ms DESC, audit_id DESC LIMIT ?`
)

// Tracking sources. Lookups take the latest version per source, so a rotated key no longer matches.
const (
	insertSource = `INSERT INTO tracking_sources (source_id, workspace_id, app_id, name, allowed_origins, enabled,
public_key, private_key_hash, created_at, updated_at, version)`
	selectSourceColumns = `SELECT source_id, argMax(workspace_id, version), argMax(app_id, version), argMax(name, version),
argMax(allowed_origins, version), argMax(enabled, version), argMax(public_key, version) AS pk,
argMax(private_key_hash, version) AS skh, min(created_at), max(updated_at) FROM tracking_sources `
	selectSourcesByWorkspace = selectSourceColumns + `WHERE workspace_id = ? GROUP BY source_id ORDER BY min(created_at), source_id`
	selectSourceByID         = selectSourceColumns + `WHERE source_id = ? GROUP BY source_id`
	// The inner query finds the source that ever had the key; HAVING keeps it only if the key is
	// still its latest, so a rotated-away key resolves to nothing.
	selectSourceByPublicKey = selectSourceColumns + `WHERE source_id IN (SELECT source_id FROM tracking_sources WHERE public_key = ?)
GROUP BY source_id HAVING pk = ?`
	selectSourceByPrivateKey = selectSourceColumns + `WHERE source_id IN (SELECT source_id FROM tracking_sources WHERE private_key_hash = ?)
GROUP BY source_id HAVING skh = ?`
)
