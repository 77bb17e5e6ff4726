CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_payments_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    created_at   DateTime('UTC'),
    public_id    String,
    currency     String,
    charge_id    String
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charge_payments_local', '{replica}')
ORDER BY (workspace_id, app_id, created_at, public_id, currency, charge_id);

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_payments ON CLUSTER revtrack AS revtrack.reporting_charge_payments_local
ENGINE = Distributed(revtrack, revtrack, reporting_charge_payments_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_charge_payments_mv ON CLUSTER revtrack TO revtrack.reporting_charge_payments_local AS
SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency, charge_id
FROM revtrack.platform_transactions_local
WHERE type = 'subscription' AND gross_cents > 0;

CREATE TABLE IF NOT EXISTS revtrack.reporting_customer_payments_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    public_id    String,
    created_at   DateTime('UTC'),
    currency     String,
    charge_id    String
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_customer_payments_local', '{replica}')
ORDER BY (workspace_id, app_id, public_id, created_at, currency, charge_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_customer_payments ON CLUSTER revtrack AS revtrack.reporting_customer_payments_local
ENGINE = Distributed(revtrack, revtrack, reporting_customer_payments_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_customer_payments_mv ON CLUSTER revtrack TO revtrack.reporting_customer_payments_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    created_at, currency, charge_id
FROM revtrack.platform_transactions_local
WHERE type = 'subscription' AND gross_cents > 0;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_billing_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    public_id    String,
    charge_id    String,
    billing_on   Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charge_billing_local', '{replica}', version)
ORDER BY (workspace_id, app_id, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_billing ON CLUSTER revtrack AS revtrack.reporting_charge_billing_local
ENGINE = Distributed(revtrack, revtrack, reporting_charge_billing_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_charge_billing_mv ON CLUSTER revtrack TO revtrack.reporting_charge_billing_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    charge_id, billing_on, version
FROM revtrack.platform_charges_local
WHERE kind = 'subscription';
