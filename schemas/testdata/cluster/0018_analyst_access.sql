CREATE TABLE IF NOT EXISTS revtrack.analyst_access ON CLUSTER revtrack (
    workspace_id    String,
    clickhouse_user String,
    password_sha256 String,
    created_at      DateTime('UTC'),
    rotated_at      DateTime('UTC'),
    version         UInt64,
    revoked         UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/analyst_access', '{shard}-{replica}', version)
ORDER BY workspace_id;
