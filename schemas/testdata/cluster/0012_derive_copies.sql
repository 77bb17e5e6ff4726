CREATE TABLE IF NOT EXISTS revtrack.platform_events_by_customer_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    customer_id  String,
    event_key    String,
    type         String,
    occurred_at  DateTime('UTC'),
    charge_id    String,
    charge_type  String,
    charge_name  String,
    amount_cents Nullable(Int64),
    currency     String,
    test         UInt8,
    billing_on   Nullable(DateTime('UTC')),
    shop_domain  String,
    shop_name    String,
    synced_at    DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_events_by_customer_local', '{replica}', synced_at)
ORDER BY (workspace_id, app_id, customer_id, event_key)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.platform_events_by_customer ON CLUSTER revtrack AS revtrack.platform_events_by_customer_local
ENGINE = Distributed(revtrack, revtrack, platform_events_by_customer_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.platform_events_by_customer_mv ON CLUSTER revtrack TO revtrack.platform_events_by_customer_local AS
SELECT workspace_id, app_id, customer_id, event_key, type, occurred_at, charge_id, charge_type, charge_name, amount_cents,
    currency, test, billing_on, shop_domain, shop_name, synced_at
FROM revtrack.platform_lifecycle_events_local;

CREATE TABLE IF NOT EXISTS revtrack.platform_subscription_sales_by_customer_local ON CLUSTER revtrack (
    workspace_id     String,
    app_id           String,
    customer_id      String,
    charge_id        String,
    transaction_id   String,
    created_at       DateTime('UTC'),
    billing_interval Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    synced_at        DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_subscription_sales_by_customer_local', '{replica}', synced_at)
ORDER BY (workspace_id, app_id, customer_id, charge_id, transaction_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.platform_subscription_sales_by_customer ON CLUSTER revtrack AS revtrack.platform_subscription_sales_by_customer_local
ENGINE = Distributed(revtrack, revtrack, platform_subscription_sales_by_customer_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.platform_subscription_sales_by_customer_mv ON CLUSTER revtrack TO revtrack.platform_subscription_sales_by_customer_local AS
SELECT workspace_id, app_id, customer_id, charge_id, transaction_id, created_at, billing_interval, synced_at
FROM revtrack.platform_transactions_local
WHERE type = 'subscription' AND charge_id != '';

CREATE TABLE IF NOT EXISTS revtrack.copy_backfills ON CLUSTER revtrack (
    copy         String,
    completed_at DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/copy_backfills', '{shard}-{replica}', completed_at)
ORDER BY copy;
