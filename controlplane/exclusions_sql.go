package controlplane

// Customer exclusions (exclusions.go): the latest row per (shop domain, app) wins, lifted rules
// included, so callers see both the rule and whether it is in force.
const (
	insertExclusion = `INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)`

	selectExclusionColumns = `SELECT workspace_id, shop_domain, app_id, argMax(excluded, version), argMax(reason, version),
argMax(updated_at, version) FROM customer_exclusions `
	selectExclusions         = selectExclusionColumns + `WHERE workspace_id = ? GROUP BY workspace_id, shop_domain, app_id ORDER BY shop_domain, app_id`
	selectExclusionsByDomain = selectExclusionColumns + `WHERE workspace_id = ? AND shop_domain = ? GROUP BY workspace_id, shop_domain, app_id`
)

// ReportExcludedCondition is the rule readers apply to a platform_customers row (columns
// shop_domain and app_id in scope): true when the latest rule of the shop for the customer's app,
// or for every app (empty app_id), excludes it. Bind the workspace ID to both placeholders.
const ReportExcludedCondition = `((shop_domain, app_id) IN (
    SELECT shop_domain, app_id FROM customer_exclusions WHERE workspace_id = ?
    GROUP BY shop_domain, app_id HAVING argMax(excluded, version) = 1)
  OR shop_domain IN (
    SELECT shop_domain FROM customer_exclusions WHERE workspace_id = ? AND app_id = ''
    GROUP BY shop_domain HAVING argMax(excluded, version) = 1))`
