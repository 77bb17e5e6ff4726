package processors

// SQL of the customer and charge derivation (platform_derive.go). Lookups are bounded by
// `workspace_id IN (?) AND app_id IN (?)`, which ClickHouse answers from the tables' primary key,
// and select the IDs with a plain `IN (?)`, also from the key where the table is ordered by that ID
// (platform_charges, and the copies ordered by customer of migration 0012); the caller drops the few rows of a workspace, app and
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

	// selectDeriveEventsByCustomer is selectDeriveEvents from the copy ordered by customer
	// (migration 0012), where the customers are key ranges, without the usage records
	// (selectDeriveUsageByCustomer). The copy receives the rows of an insert into
	// platform_lifecycle_events before that insert returns (the materialized view runs inside it),
	// so the batch's own events are there. It is keyed like the source, and its merges keep, as the
	// source's do, the latest copy of an event by synced_at: the copy the fold keeps.
	selectDeriveEventsByCustomer = `SELECT workspace_id, app_id, customer_id, event_key, type, occurred_at, charge_id, charge_type,
charge_name, amount_cents, currency, test, billing_on, shop_domain, shop_name, synced_at
FROM platform_events_by_customer
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?) AND NOT (` + usageRecordCondition + `)`

	// usageRecordCondition selects the usage records: USAGE_CHARGE_APPLIED events, which are about
	// no subscription or one-time charge (chargeKind).
	usageRecordCondition = `type = 'USAGE_CHARGE_APPLIED' AND charge_type NOT IN ('AppSubscription', 'AppPurchaseOneTime')`

	// selectDeriveUsageByCustomer sums up each customer's usage records for the fold
	// (platform_derive_usage.go): whether the picks below are the fold's for the domain and for the
	// name (no copy without one is later than the last copy with one), then the last record, the
	// last with a shop domain and the last with a shop name (each: key, time, domain, name,
	// synced_at), in the fold's order.
	selectDeriveUsageByCustomer = `SELECT workspace_id, app_id, customer_id,
    countIf(shop_domain != '') = 0 OR argMaxIf(` + usageOrder + `, ` + usageOrder + `, shop_domain = '') < argMaxIf(` + usageOrder + `, ` + usageOrder + `, shop_domain != ''),
    countIf(shop_name != '') = 0 OR argMaxIf(` + usageOrder + `, ` + usageOrder + `, shop_name = '') < argMaxIf(` + usageOrder + `, ` + usageOrder + `, shop_name != ''),
    argMax(event_key, ` + usageOrder + `), argMax(occurred_at, ` + usageOrder + `), argMax(shop_domain, ` + usageOrder + `),
    argMax(shop_name, ` + usageOrder + `), argMax(synced_at, ` + usageOrder + `),
    argMaxIf(event_key, ` + usageOrder + `, shop_domain != ''), argMaxIf(occurred_at, ` + usageOrder + `, shop_domain != ''),
    argMaxIf(shop_domain, ` + usageOrder + `, shop_domain != ''), argMaxIf(shop_name, ` + usageOrder + `, shop_domain != ''),
    argMaxIf(synced_at, ` + usageOrder + `, shop_domain != ''),
    argMaxIf(event_key, ` + usageOrder + `, shop_name != ''), argMaxIf(occurred_at, ` + usageOrder + `, shop_name != ''),
    argMaxIf(shop_domain, ` + usageOrder + `, shop_name != ''), argMaxIf(shop_name, ` + usageOrder + `, shop_name != ''),
    argMaxIf(synced_at, ` + usageOrder + `, shop_name != '')
FROM platform_events_by_customer
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?) AND ` + usageRecordCondition + `
GROUP BY workspace_id, app_id, customer_id`

	// usageOrder is the fold's order of usage records (compareEvents: time, then key; they share a
	// rank), then the copy's synced_at.
	usageOrder = `tuple(occurred_at, event_key, synced_at)`

	// selectDeriveUsageRecordsByCustomer reads the usage records of the given customers, every copy,
	// with what the fold uses of them.
	selectDeriveUsageRecordsByCustomer = `SELECT workspace_id, app_id, customer_id, event_key, occurred_at, shop_domain, shop_name, synced_at
FROM platform_events_by_customer
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?) AND ` + usageRecordCondition

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

	// selectCustomerIntervalsByCustomer is selectCustomerIntervals from the copy of the subscription
	// transactions that name a charge, ordered by customer (migration 0012).
	selectCustomerIntervalsByCustomer = `SELECT workspace_id, app_id, charge_id, toString(argMax(billing_interval, created_at))
FROM platform_subscription_sales_by_customer
WHERE workspace_id IN (?) AND app_id IN (?) AND customer_id IN (?)
GROUP BY workspace_id, app_id, charge_id`

	// selectCompleteCopies names the derivation's copies that hold every row of their sources.
	selectCompleteCopies = `SELECT DISTINCT copy FROM copy_backfills
WHERE copy = 'platform_events_by_customer' OR copy = 'platform_subscription_sales_by_customer'`

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
