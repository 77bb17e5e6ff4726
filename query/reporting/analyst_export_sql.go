package reporting

// Queries of the analyst export (analyst_export.go). The rules of sql.go hold (ClickHouse 18.16 and
// current; `?` binding; instants as epoch seconds).

// selectMRRDataStart is the first instant at which some customer of the scope can have MRR: the
// earliest positive subscription payment (no customer pays without one, METRICS 2.3–2.4) and the
// earliest usage sale (usage MRR, 3.2), each 0 when there is none (the minimum of no row is the
// type's default on both engines). A duplicate changes no minimum. Arguments: workspace, apps,
// workspace, apps.
const selectMRRDataStart = `SELECT
    (SELECT toUInt32(min(created_at)) FROM reporting_charge_payments WHERE workspace_id = ? AND app_id IN ?),
    (SELECT toUInt32(min(created_at)) FROM reporting_usage_sales WHERE workspace_id = ? AND app_id IN ?)`

// selectExportNames is each customer's platform ID and shop domain, the latest version, for the
// rows analysts join on (customer_id). Arguments: workspace, apps.
const selectExportNames = `SELECT ` + customerKeySQL + ` AS key, customer_id, shop_domain
FROM reporting_customers FINAL
WHERE workspace_id = ? AND app_id IN ?`
