CREATE TABLE IF NOT EXISTS revtrack.schema_migrations ON CLUSTER revtrack (
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/schema_migrations', '{shard}-{replica}', applied_at)
ORDER BY version;
