CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_sales_local ON CLUSTER revtrack (
    workspace_id   String,
    app_id         String,
    created_at     DateTime('UTC'),
    transaction_id String,
    public_id      String,
    currency       String,
    gross_cents    Int64,
    net_cents      Int64,
    synced_at      DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_usage_sales_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, created_at, transaction_id);

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_sales ON CLUSTER revtrack AS revtrack.reporting_usage_sales_local
ENGINE = Distributed(revtrack, revtrack, reporting_usage_sales_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_usage_sales_mv ON CLUSTER revtrack TO revtrack.reporting_usage_sales_local AS
SELECT workspace_id, app_id, created_at, transaction_id,
    concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id, currency, gross_cents,
    net_cents, synced_at
FROM revtrack.platform_transactions_local
WHERE type = 'usage';

CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_usage_local ON CLUSTER revtrack (
    workspace_id    String,
    app_id          String,
    occurred_at     DateTime('UTC'),
    usage_record_id String,
    customer_id     String,
    charge_id       String,
    currency        String,
    amount_cents    Int64,
    test            UInt8,
    synced_at       DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_observed_usage_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, occurred_at, usage_record_id);

CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_usage ON CLUSTER revtrack AS revtrack.reporting_observed_usage_local
ENGINE = Distributed(revtrack, revtrack, reporting_observed_usage_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_observed_usage_mv ON CLUSTER revtrack TO revtrack.reporting_observed_usage_local AS
SELECT workspace_id, app_id, occurred_at, usage_record_id, customer_id, charge_id, currency, amount_cents, test, synced_at
FROM revtrack.platform_usage_charges_local;
