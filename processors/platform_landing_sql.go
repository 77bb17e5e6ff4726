package processors

// Inserts of the platform-records landing consumer (platform_landing.go), columns in the order of
// the row functions.
const (
	insertPlatformTransactions = `INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id,
shop_domain, charge_id, created_at, currency, gross_cents, platform_fee_cents, processing_fee_cents, net_cents,
billing_interval, synced_at)`

	insertPlatformLifecycleEvents = `INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type,
customer_id, shop_domain, shop_name, occurred_at, charge_id, charge_type, charge_name, amount_cents, currency, test,
billing_on, reason, description, synced_at)`

	insertPlatformUsageCharges = `INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id,
charge_id, description, amount_cents, currency, occurred_at, test, synced_at)`
)
