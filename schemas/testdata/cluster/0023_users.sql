CREATE TABLE IF NOT EXISTS revtrack.users ON CLUSTER revtrack (
    user_id       String,
    email         String,
    name          String,
    password_hash String,
    created_at    DateTime('UTC'),
    updated_at    DateTime('UTC'),
    version       UInt64,
    deleted       UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/users', '{shard}-{replica}', version)
ORDER BY user_id;

CREATE TABLE IF NOT EXISTS revtrack.user_tokens ON CLUSTER revtrack (
    token_hash   String,
    kind         Enum8('invitation' = 1, 'password_reset' = 2),
    token_id     String,
    email        String,
    workspace_id String,
    role         String,
    created_by   String,
    created_at   DateTime('UTC'),
    expires_at   DateTime('UTC'),
    used_at      Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/user_tokens', '{shard}-{replica}', version)
ORDER BY token_hash;
