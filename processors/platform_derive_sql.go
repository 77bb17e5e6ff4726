package processors

// SQL of the customer and charge derivation (platform_derive.go). Lookups are bounded by
// `workspace_id IN (?) AND app_id IN (?)`, which ClickHouse answers from the tables' primary key,
// and select the IDs with a plain `IN (?)`; the caller drops the few rows of a workspace, app and
// ID combination it did not ask for (a tuple IN is exact but twice as slow on 18.16). Every set is
// bound as a list of one-value clickhouse.GroupSet (keyArgs), which the driver renders as
// `(('a'), ('b'), …)`: a set literal that ClickHouse looks rows up in by hash. `has(?, col)` with a
// bound array gives the same rows, but ClickHouse 18.16 scans the array for every row: 7.6 s
// instead of 0.06 s for 1,000 IDs against 2 million events.
const (
	// selectDeriveEvents reads every lifecycle event of the given customers. Copies of
	// an event (redelivery, re-sync) are all read; the fold keeps the latest by synced_at.
	selectDeriveEvents = `SELECT workspace_id, app_id, customer_id, event_key, type, occurred_at, charge_id, charge_type,
charge_name, amount_cents, currency, test, billing_on, shop_domain, shop_name, synced_at
FROM platform_lifecycle_events
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?)`

	// selectCustomerIntervals is the billing interval of each charge's latest subscription
	// transaction, for the charges of the given customers.
	selectCustomerIntervals = `SELECT workspace_id, app_id, charge_id, toString(argMax(billing_interval, created_at))
FROM platform_transactions
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?)
    AND type = 'subscription' AND charge_id != ''
GROUP BY workspace_id, app_id, charge_id`

	// selectChargeIntervals is the same for the given charges.
	selectChargeIntervals = `SELECT workspace_id, app_id, charge_id, toString(argMax(billing_interval, created_at))
FROM platform_transactions
WHERE workspace_id IN (?) AND app_id IN (?) AND charge_id IN (?) AND type = 'subscription'
GROUP BY workspace_id, app_id, charge_id`

	// selectLatestCharges reads the latest version of the given charges, whether or not
	// ClickHouse merged their parts yet.
	selectLatestCharges = `SELECT workspace_id, app_id, charge_id, customer_id, toString(kind), name, amount_cents, currency,
toString(billing_interval), status, test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at, billing_on,
end_reason, state_events, customer_uninstalls, states_derived
FROM platform_charges
WHERE workspace_id IN (?) AND app_id IN (?) AND charge_id IN (?)
ORDER BY version DESC
LIMIT 1 BY workspace_id, app_id, charge_id`

	insertPlatformCharges = `INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name,
amount_cents, currency, billing_interval, status, test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at,
billing_on, end_reason, state_events, customer_uninstalls, states_derived, version)`

	insertPlatformCustomers = `INSERT INTO platform_customers (workspace_id, app_id, customer_id, public_id, shop_id,
shop_domain, shop_name, status, country, plan, tags, store_classification, report_excluded, first_installed_at,
last_event_at, version)`
)
