CREATE TABLE IF NOT EXISTS revtrack.ad_connections ON CLUSTER revtrack (
    connection_id            String,
    workspace_id             String,
    provider                 String,
    state                    Enum8('disconnected' = 0, 'connected' = 1),
    refresh_token_enc        String,
    encryption_key_id        String,
    granted_scopes           Array(String),
    conversion_customer_id   String,
    login_customer_id        String,
    last_error               String,
    connected_by             String,
    created_at               DateTime('UTC'),
    updated_at               DateTime('UTC'),
    version                  UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/ad_connections', '{shard}-{replica}', version)
ORDER BY (workspace_id, connection_id);

CREATE TABLE IF NOT EXISTS revtrack.conversion_actions ON CLUSTER revtrack (
    workspace_id           String,
    conversion_customer_id String,
    action_id              String,
    name                   String,
    status                 String,
    refreshed_at           DateTime('UTC'),
    version                UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/conversion_actions', '{shard}-{replica}', version)
ORDER BY (workspace_id, conversion_customer_id, action_id);

CREATE TABLE IF NOT EXISTS revtrack.ad_mappings ON CLUSTER revtrack (
    mapping_id             String,
    workspace_id           String,
    connection_id          String,
    source_id              String,
    milestone              Enum8('install' = 1, 'trial_started' = 2, 'trial_converted' = 3, 'qualified' = 4, 'paid' = 5),
    conversion_action_id   String,
    conversion_action_name String,
    fixed_value_cents      Nullable(Int64),
    fixed_currency         String,
    consent_confirmed      UInt8,
    validation_only        UInt8 DEFAULT 1,
    enabled                UInt8,
    disabled_reason        String,
    created_at             DateTime('UTC'),
    updated_at             DateTime('UTC'),
    version                UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/ad_mappings', '{shard}-{replica}', version)
ORDER BY (workspace_id, mapping_id);

CREATE TABLE IF NOT EXISTS revtrack.upload_queue_local ON CLUSTER revtrack (
    row_id            String,
    workspace_id      String,
    mapping_id        String,
    source_id         String,
    event_id_hash     String,
    transaction_id    String,
    milestone         String,
    acquisition_id    String,
    click_id_type     Enum8('' = 0, 'gclid' = 1, 'gbraid' = 2, 'wbraid' = 3),
    click_id          String,
    event_time        DateTime('UTC'),
    value_cents       Nullable(Int64),
    currency          String,
    status            Enum8('queued' = 1, 'unattributed' = 2, 'validated' = 3, 'accepted' = 4, 'retrying' = 5, 'rejected' = 6),
    validation_only   UInt8,
    attempts          UInt16,
    next_attempt_at   Nullable(DateTime('UTC')),
    request_id        String,
    reason_codes      Array(String),
    message           String,
    created_at        DateTime('UTC'),
    updated_at        DateTime('UTC'),
    version           UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/upload_queue_local', '{replica}', version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, mapping_id, row_id);

CREATE TABLE IF NOT EXISTS revtrack.upload_queue ON CLUSTER revtrack AS revtrack.upload_queue_local
ENGINE = Distributed(revtrack, revtrack, upload_queue_local, cityHash64(row_id));
