CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts_local ON CLUSTER revtrack (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charge_facts_local', '{replica}', version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id);

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts ON CLUSTER revtrack AS revtrack.reporting_charge_facts_local
ENGINE = Distributed(revtrack, revtrack, reporting_charge_facts_local, cityHash64(public_id));
