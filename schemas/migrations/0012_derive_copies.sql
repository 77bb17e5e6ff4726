-- What the customer and charge derivation reads (processors/platform_derive.go, docs/PLATFORM_DATA.md):
-- every lifecycle event of each customer a batch touches, and the billing intervals of its
-- subscription transactions. platform_lifecycle_events and platform_transactions are ordered by the
-- platform's IDs, so each of those reads went through all of an app's rows, and landing slowed down
-- as the history grew. The tables below hold the same rows again, ordered by customer, so that the
-- reads are key ranges. The reporting copies (0011) cannot serve: they leave out columns the
-- derivation needs (shop, charge type, test flag, billing date; the charge of a transaction).
--
-- Like the reporting copies, each is filled by a materialized view from every insert into its
-- source, synchronously with the insert, and is a replacing table keyed like its source (event_key
-- and transaction_id already name one customer's row). Rows landed before the view existed are
-- copied by `revtrack admin reporting backfill` (automatic after the migrations when a copy is empty
-- while its source is not). Until a copy is recorded complete in copy_backfills the derivation keeps
-- reading the source table.

CREATE TABLE IF NOT EXISTS platform_events_by_customer (
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
) ENGINE = ReplacingMergeTree(synced_at)
ORDER BY (workspace_id, app_id, customer_id, event_key)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS platform_events_by_customer_mv TO platform_events_by_customer AS
SELECT workspace_id, app_id, customer_id, event_key, type, occurred_at, charge_id, charge_type, charge_name, amount_cents,
    currency, test, billing_on, shop_domain, shop_name, synced_at
FROM platform_lifecycle_events;

-- Subscription transactions that name their charge: what a charge's billing interval is read from
-- (its latest subscription transaction's).
CREATE TABLE IF NOT EXISTS platform_subscription_sales_by_customer (
    workspace_id     String,
    app_id           String,
    customer_id      String,
    charge_id        String,
    transaction_id   String,
    created_at       DateTime('UTC'),
    billing_interval Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    synced_at        DateTime('UTC')
) ENGINE = ReplacingMergeTree(synced_at)
ORDER BY (workspace_id, app_id, customer_id, charge_id, transaction_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS platform_subscription_sales_by_customer_mv TO platform_subscription_sales_by_customer AS
SELECT workspace_id, app_id, customer_id, charge_id, transaction_id, created_at, billing_interval, synced_at
FROM platform_transactions
WHERE type = 'subscription' AND charge_id != '';

-- The copies (tables filled by a materialized view, 0011 and above) known to hold every row of
-- their source: recorded by a backfill that found every part of the source copied, or after the
-- migrations when the source was still empty (then the view copies everything). A copy not listed
-- may lack rows landed before its view existed.
CREATE TABLE IF NOT EXISTS copy_backfills (
    copy         String,
    completed_at DateTime('UTC')
) ENGINE = ReplacingMergeTree(completed_at)
ORDER BY copy;
