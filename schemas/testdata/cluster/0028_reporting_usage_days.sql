CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_days_local ON CLUSTER revtrack (
    workspace_id      String,
    app_id            String,
    day               UInt32,
    public_id         String,
    currency          String,
    usage_sales       UInt64,
    usage_gross_cents Int64,
    usage_net_cents   Int64,
    version           UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_usage_days_local', '{replica}', version)
ORDER BY (workspace_id, app_id, day, public_id, currency);

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_days ON CLUSTER revtrack AS revtrack.reporting_usage_days_local
ENGINE = Distributed(revtrack, revtrack, reporting_usage_days_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_usage_days_mv ON CLUSTER revtrack TO revtrack.reporting_usage_days_local AS
SELECT workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents, version
FROM revtrack.reporting_customer_days_local
WHERE usage_sales > 0;
