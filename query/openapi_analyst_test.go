package query_test

// analystCalls exercise the workspace's analyst access (docs/ANALYSTS.md) in the contract run. The
// app runs with the test stack's users.d directory (REVTRACK_CLICKHOUSE_USERS_DIR), so the user is
// really created, rotated and revoked; the last call leaves nothing behind.
func (e contractEnv) analystCalls() []call {
	const path = "/api/admin/analyst-access"
	return []call{
		{name: "analyst access before a grant", method: "GET", path: path, key: e.admin, want: 404},
		{name: "analyst access with a read key", method: "POST", path: path, key: e.read, want: 403},
		{name: "grant analyst access", method: "POST", path: path, key: e.admin, want: 201},
		{name: "rotate analyst access", method: "POST", path: path, key: e.admin, want: 200},
		{name: "analyst access", method: "GET", path: path, key: e.admin, want: 200},
		{name: "revoke analyst access", method: "DELETE", path: path, key: e.admin, want: 204},
		{name: "revoke analyst access again", method: "DELETE", path: path, key: e.admin, want: 404},
	}
}
