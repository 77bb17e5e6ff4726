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
	selectAudit = `SELECT at, workspace_id, actor, action, target_type, target_id, details FROM audit_log
WHERE workspace_id = ? ORDER BY at DESC, at_ms DESC LIMIT ?`
)
