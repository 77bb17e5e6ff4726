CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_days_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    day          UInt32,
    public_id    String,
    charge_id    String,
    currency     String,
    records      UInt64,
    amount_cents Int64,
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_observed_days_local', '{replica}', version)
ORDER BY (workspace_id, app_id, day, public_id, charge_id, currency);

CREATE TABLE IF NOT EXISTS revtrack.reporting_observed_days ON CLUSTER revtrack AS revtrack.reporting_observed_days_local
ENGINE = Distributed(revtrack, revtrack, reporting_observed_days_local, cityHash64(public_id));
