CREATE TABLE IF NOT EXISTS revtrack.reporting_customer_days_local ON CLUSTER revtrack (
    workspace_id      String,
    app_id            String,
    day               UInt32,
    public_id         String,
    currency          String,
    transactions      UInt64,
    net_cents         Int64,
    usage_sales       UInt64,
    usage_gross_cents Int64,
    usage_net_cents   Int64,
    version           UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_customer_days_local', '{replica}', version)
ORDER BY (workspace_id, app_id, day, public_id, currency);

CREATE TABLE IF NOT EXISTS revtrack.reporting_customer_days ON CLUSTER revtrack AS revtrack.reporting_customer_days_local
ENGINE = Distributed(revtrack, revtrack, reporting_customer_days_local, cityHash64(public_id));
