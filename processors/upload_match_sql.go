package processors

// SQL of the upload matcher (upload_match_sink.go). Every set is bound as a list of one-value
// clickhouse.GroupSet (valueSet), which the driver renders as `(('a'), ('b'), …)` and which both
// ClickHouse 18.16 and current ClickHouse look rows up in by hash (see platform_derive_sql.go). The
// caller drops rows of combinations it did not ask for.
const (
	// selectUploadMappings reads the enabled mappings of the given workspaces whose connection is
	// connected. Both tables are ReplacingMergeTree: the latest version of each mapping and each
	// connection is taken with argMax before filtering, whether or not ClickHouse merged the parts
	// yet (a disabled or disconnected latest version must hide every older enabled one). Aliases
	// differ from column names because 18.16 resolves an alias that shadows a column inside its
	// own aggregate. conn_id is the join key of both sides (18.16 joins only on equal names); joined
	// subqueries carry aliases because current ClickHouse requires them.
	selectUploadMappings = `SELECT workspace_id, mapping_id, m_source_id, m_milestone
FROM (
    SELECT workspace_id, mapping_id, argMax(connection_id, version) AS conn_id, argMax(source_id, version) AS m_source_id,
        toString(argMax(milestone, version)) AS m_milestone, argMax(enabled, version) AS m_enabled
    FROM ad_mappings
    WHERE workspace_id IN (?)
    GROUP BY workspace_id, mapping_id
) AS mappings ANY INNER JOIN (
    SELECT workspace_id, connection_id AS conn_id, toString(argMax(state, version)) AS c_state
    FROM ad_connections
    WHERE workspace_id IN (?)
    GROUP BY workspace_id, connection_id
) AS connections USING (workspace_id, conn_id)
WHERE m_enabled = 1 AND c_state = 'connected'
ORDER BY workspace_id, mapping_id`

	// selectClickEvidence reads the click identifiers of the given acquisitions, merged over their
	// monthly rows: the first non-empty value of each (acquisition_clicks, migration 0015), else the
	// first touch's (acquisitions), which is all there is for browser events landed before
	// acquisition_clicks existed. A browser that first came organically and later through an ad thus
	// keeps its click. An acquisition without browser events has no row at all (the matcher tells that
	// apart from one that captured no click); acquisition_clicks has no row for one that never
	// captured a click, and the join's default '' then falls back to first_* (also '').
	//
	// Both sides are filtered by the same sets, so they are bound by number and each is used twice:
	// $1 workspaces, $2 sources, $3 acquisition IDs.
	selectClickEvidence = `SELECT source_id, acquisition_id, if(c_gclid != '', c_gclid, f_gclid), if(c_gbraid != '', c_gbraid, f_gbraid),
    if(c_wbraid != '', c_wbraid, f_wbraid)
FROM (
    SELECT source_id, acquisition_id, argMinMerge(first_gclid) AS f_gclid, argMinMerge(first_gbraid) AS f_gbraid,
        argMinMerge(first_wbraid) AS f_wbraid
    FROM acquisitions
    WHERE workspace_id IN ($1) AND source_id IN ($2) AND acquisition_id IN ($3)
    GROUP BY source_id, acquisition_id
) AS first_touch ANY LEFT JOIN (
    SELECT source_id, acquisition_id, argMinMerge(click_gclid) AS c_gclid, argMinMerge(click_gbraid) AS c_gbraid,
        argMinMerge(click_wbraid) AS c_wbraid
    FROM acquisition_clicks
    WHERE workspace_id IN ($1) AND source_id IN ($2) AND acquisition_id IN ($3)
    GROUP BY source_id, acquisition_id
) AS clicks USING (source_id, acquisition_id)`
)
