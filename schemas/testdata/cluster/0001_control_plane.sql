CREATE TABLE IF NOT EXISTS revtrack.workspaces ON CLUSTER revtrack (
    workspace_id        String,
    slug                String,
    name                String,
    subscription_status Enum8('active' = 1, 'trialing' = 2, 'past_due' = 3, 'canceled' = 4, 'inactive' = 5),
    selected_app_ids    Array(String),
    created_at          DateTime('UTC'),
    updated_at          DateTime('UTC'),
    version             UInt64,
    deleted             UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/workspaces', '{shard}-{replica}', version)
ORDER BY workspace_id;

CREATE TABLE IF NOT EXISTS revtrack.workspace_members ON CLUSTER revtrack (
    workspace_id String,
    user_id      String,
    email        String,
    role         Enum8('owner' = 1, 'admin' = 2, 'member' = 3),
    created_at   DateTime('UTC'),
    updated_at   DateTime('UTC'),
    version      UInt64,
    deleted      UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/workspace_members', '{shard}-{replica}', version)
ORDER BY (workspace_id, user_id);

CREATE TABLE IF NOT EXISTS revtrack.apps ON CLUSTER revtrack (
    app_id          String,
    platform_app_id String,
    name            String,
    created_at      DateTime('UTC'),
    updated_at      DateTime('UTC'),
    version         UInt64,
    deleted         UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/apps', '{shard}-{replica}', version)
ORDER BY app_id;

CREATE TABLE IF NOT EXISTS revtrack.api_keys ON CLUSTER revtrack (
    key_id       String,
    workspace_id String,
    name         String,
    key_hash     String,
    created_by   String,
    created_at   DateTime('UTC'),
    revoked_at   Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/api_keys', '{shard}-{replica}', version)
ORDER BY key_id;

CREATE TABLE IF NOT EXISTS revtrack.tracking_sources ON CLUSTER revtrack (
    source_id        String,
    workspace_id     String,
    app_id           String,
    name             String,
    allowed_origins  Array(String),
    enabled          UInt8,
    public_key       String,
    private_key_hash String,
    created_at       DateTime('UTC'),
    updated_at       DateTime('UTC'),
    version          UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/tracking_sources', '{shard}-{replica}', version)
ORDER BY source_id;

CREATE TABLE IF NOT EXISTS revtrack.audit_log_local ON CLUSTER revtrack (
    at           DateTime('UTC'),
    at_ms        UInt16,
    audit_id     String,
    workspace_id String,
    actor        String,
    action       String,
    target_type  String,
    target_id    String,
    details      String
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/revtrack/audit_log_local', '{replica}')
PARTITION BY toYYYYMM(at)
ORDER BY (workspace_id, at, audit_id);

CREATE TABLE IF NOT EXISTS revtrack.audit_log ON CLUSTER revtrack AS revtrack.audit_log_local
ENGINE = Distributed(revtrack, revtrack, audit_log_local, cityHash64(workspace_id));
