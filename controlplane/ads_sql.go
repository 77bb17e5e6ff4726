package controlplane

// Queries of the advertising connection, its mappings and the conversion-action cache (tables of
// migration 0004). Every row is a version; reads take the latest per key with argMax.
const (
	insertAdConnection = `INSERT INTO ad_connections (connection_id, workspace_id, provider, state, refresh_token_enc,
encryption_key_id, granted_scopes, conversion_customer_id, login_customer_id, last_error, connected_by,
created_at, updated_at, version, google_account_id, google_account_email)`
	// A workspace has at most one live connection; a new one replaces a disconnected one, so the
	// workspace's connection is the one written last.
	selectAdConnection = `SELECT connection_id, argMax(workspace_id, version), argMax(provider, version),
toString(argMax(state, version)), argMax(encryption_key_id, version), argMax(granted_scopes, version),
argMax(conversion_customer_id, version), argMax(login_customer_id, version), argMax(last_error, version),
argMax(connected_by, version), min(created_at), max(updated_at), max(version) AS v,
argMax(google_account_id, version), argMax(google_account_email, version)
FROM ad_connections WHERE workspace_id = ? GROUP BY connection_id ORDER BY v DESC LIMIT 1`

	insertAdMapping = `INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone,
conversion_action_id, conversion_action_name, fixed_value_cents, fixed_currency, consent_confirmed,
validation_only, enabled, disabled_reason, created_at, updated_at, version, disabled_cause)`
	// fixed_value_cents goes through ifNull: argMax skips NULL arguments, so a value removed in the
	// latest version would otherwise come back from an older one. 0 means none (values are positive).
	selectAdMappingColumns = `SELECT mapping_id, argMax(workspace_id, version), argMax(connection_id, version),
argMax(source_id, version), toString(argMax(milestone, version)), argMax(conversion_action_id, version),
argMax(conversion_action_name, version), argMax(ifNull(fixed_value_cents, 0), version), argMax(fixed_currency, version),
argMax(consent_confirmed, version), argMax(validation_only, version), argMax(enabled, version) AS en,
argMax(disabled_reason, version), min(created_at) AS created, max(updated_at), argMax(disabled_cause, version)
FROM ad_mappings `
	selectAdMappings     = selectAdMappingColumns + `WHERE workspace_id = ? GROUP BY mapping_id ORDER BY created, mapping_id`
	selectAdMapping      = selectAdMappingColumns + `WHERE workspace_id = ? AND mapping_id = ? GROUP BY mapping_id`
	selectEnabledMapping = selectAdMappingColumns + `GROUP BY mapping_id HAVING en = 1 ORDER BY created, mapping_id`

	insertConversionAction = `INSERT INTO conversion_actions (workspace_id, conversion_customer_id, action_id, name, status,
refreshed_at, version)`
	selectConversionActions = `SELECT action_id, argMax(name, version) AS nm, argMax(status, version) AS st, max(refreshed_at)
FROM conversion_actions WHERE workspace_id = ? AND conversion_customer_id = ? GROUP BY action_id
HAVING st != 'REMOVED' ORDER BY nm, action_id`
)

// AdsQueries lists the SQL of the advertising tables, for compatibility checks.
func AdsQueries() []string {
	return []string{insertAdConnection, selectAdConnection, insertAdMapping, selectAdMappings, selectAdMapping,
		selectEnabledMapping, insertConversionAction, selectConversionActions}
}
