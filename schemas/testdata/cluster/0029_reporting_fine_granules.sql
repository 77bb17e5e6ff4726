CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts_fine_local ON CLUSTER revtrack (
    workspace_id        String,
    app_id              String,
    retired             UInt32,
    public_id           String,
    charge_id           String,
    live                UInt8,
    amount_cents        Int64,
    currency            String,
    annual              UInt8,
    frozen              UInt8,
    trial_days          UInt16,
    accepted            UInt32,
    activated           UInt32,
    ended               UInt32,
    states_derived      UInt8,
    state_events        Array(UInt64),
    customer_uninstalls Array(UInt32),
    payments            Array(UInt32),
    payment_currencies  Array(String),
    version             UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charge_facts_fine_local', '{replica}', version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts_fine ON CLUSTER revtrack AS revtrack.reporting_charge_facts_fine_local
ENGINE = Distributed(revtrack, revtrack, reporting_charge_facts_fine_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_charge_facts_fine_mv ON CLUSTER revtrack TO revtrack.reporting_charge_facts_fine_local AS
SELECT workspace_id, app_id, retired, public_id, charge_id, live, amount_cents, currency, annual, frozen, trial_days,
    accepted, activated, ended, states_derived, state_events, customer_uninstalls, payments, payment_currencies, version
FROM revtrack.reporting_charge_facts_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_days_fine_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    day          UInt32,
    public_id    String,
    charge_id    String,
    currency     String,
    records      UInt64,
    amount_cents Int64,
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_observed_days_fine_local', '{replica}', version)
ORDER BY (workspace_id, app_id, day, public_id, charge_id, currency)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_days_fine ON CLUSTER revtrack AS revtrack.reporting_observed_days_fine_local
ENGINE = Distributed(revtrack, revtrack, reporting_observed_days_fine_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_observed_days_fine_mv ON CLUSTER revtrack TO revtrack.reporting_observed_days_fine_local AS
SELECT workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents, version
FROM revtrack.reporting_observed_days_local;
