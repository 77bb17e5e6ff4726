package controlplane

// Queries of people and one-time links (migration 0023). Latest version per key via argMax.
const (
	insertUser = `INSERT INTO users (user_id, email, name, password_hash, created_at, updated_at, version, deleted)`
	selectUser = `SELECT user_id, argMax(email, version), argMax(name, version), argMax(password_hash, version),
min(created_at), argMax(deleted, version) AS del FROM users WHERE user_id = ? GROUP BY user_id HAVING del = 0`

	// A user's workspaces with their role, tombstoned memberships left out.
	selectMemberships = `SELECT workspace_id, toString(argMax(role, version)), argMax(deleted, version) AS del
FROM workspace_members WHERE user_id = ? GROUP BY workspace_id HAVING del = 0 ORDER BY workspace_id`

	// A workspace's members with the name of their user (empty for a member who never signed up).
	selectMemberList = `SELECT m.user_id, m.email, m.role, m.created, u.name FROM (
  SELECT user_id, argMax(email, version) AS email, toString(argMax(role, version)) AS role, min(created_at) AS created,
         argMax(deleted, version) AS del
  FROM workspace_members WHERE workspace_id = ? GROUP BY user_id HAVING del = 0) AS m
LEFT JOIN (SELECT user_id, argMax(name, version) AS name FROM users GROUP BY user_id) AS u ON u.user_id = m.user_id
ORDER BY m.email, m.user_id`

	insertUserToken = `INSERT INTO user_tokens (token_hash, kind, token_id, email, workspace_id, role, created_by, created_at,
expires_at, used_at, version)`
	selectUserToken = `SELECT token_hash, toString(argMax(kind, version)), argMax(token_id, version), argMax(email, version),
argMax(workspace_id, version), argMax(role, version), argMax(created_by, version), min(created_at), argMax(expires_at, version),
argMax(used_at, version) FROM user_tokens WHERE token_hash = ? GROUP BY token_hash`
)
