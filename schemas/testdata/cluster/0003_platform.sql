CREATE TABLE IF NOT EXISTS revtrack.partner_connections ON CLUSTER revtrack (
    workspace_id     String,
    organization_id  String,
    access_token_enc String,
    api_base_url     String,
    created_at       DateTime('UTC'),
    updated_at       DateTime('UTC'),
    version          UInt64,
    deleted          UInt8 DEFAULT 0
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/partner_connections', '{shard}-{replica}', version)
ORDER BY workspace_id;

CREATE TABLE IF NOT EXISTS revtrack.platform_customers_local ON CLUSTER revtrack (
    workspace_id          String,
    app_id                String,
    customer_id           String,
    shop_id               String,
    shop_domain           String,
    shop_name             String,
    status                String,
    country               String,
    plan                  String,
    tags                  Array(String),
    store_classification  String,
    report_excluded       UInt8,
    first_installed_at    Nullable(DateTime('UTC')),
    last_event_at         Nullable(DateTime('UTC')),
    version               UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_customers_local', '{replica}', version)
ORDER BY (workspace_id, app_id, customer_id);

CREATE TABLE IF NOT EXISTS revtrack.platform_customers ON CLUSTER revtrack AS revtrack.platform_customers_local
ENGINE = Distributed(revtrack, revtrack, platform_customers_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.platform_charges_local ON CLUSTER revtrack (
    workspace_id        String,
    app_id              String,
    charge_id           String,
    customer_id         String,
    kind                Enum8('subscription' = 1, 'one_time' = 2, 'usage' = 3),
    name                String,
    amount_cents        Int64,
    currency            String,
    billing_interval    Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    status              String,
    test                UInt8,
    trial_days          UInt16,
    capped_amount_cents Nullable(Int64),
    accepted_at         Nullable(DateTime('UTC')),
    activated_at        Nullable(DateTime('UTC')),
    ended_at            Nullable(DateTime('UTC')),
    billing_on          Nullable(DateTime('UTC')),
    version             UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_charges_local', '{replica}', version)
ORDER BY (workspace_id, app_id, charge_id);

CREATE TABLE IF NOT EXISTS revtrack.platform_charges ON CLUSTER revtrack AS revtrack.platform_charges_local
ENGINE = Distributed(revtrack, revtrack, platform_charges_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.platform_lifecycle_events_local ON CLUSTER revtrack (
    workspace_id  String,
    app_id        String,
    event_key     String,
    type          String,
    customer_id   String,
    shop_domain   String,
    occurred_at   DateTime('UTC'),
    charge_id     String,
    charge_name   String,
    amount_cents  Nullable(Int64),
    currency      String,
    reason        String,
    description   String,
    synced_at     DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_lifecycle_events_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, event_key);

CREATE TABLE IF NOT EXISTS revtrack.platform_lifecycle_events ON CLUSTER revtrack AS revtrack.platform_lifecycle_events_local
ENGINE = Distributed(revtrack, revtrack, platform_lifecycle_events_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.platform_transactions_local ON CLUSTER revtrack (
    workspace_id         String,
    app_id               String,
    transaction_id       String,
    type                 Enum8('subscription' = 1, 'usage' = 2, 'one_time' = 3, 'adjustment' = 4, 'credit' = 5, 'refund' = 6),
    customer_id          String,
    shop_domain          String,
    charge_id            String,
    created_at           DateTime('UTC'),
    currency             String,
    gross_cents          Int64,
    platform_fee_cents   Int64,
    processing_fee_cents Nullable(Int64),
    net_cents            Int64,
    billing_interval     Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    synced_at            DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_transactions_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, transaction_id);

CREATE TABLE IF NOT EXISTS revtrack.platform_transactions ON CLUSTER revtrack AS revtrack.platform_transactions_local
ENGINE = Distributed(revtrack, revtrack, platform_transactions_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.platform_usage_charges_local ON CLUSTER revtrack (
    workspace_id    String,
    app_id          String,
    usage_record_id String,
    customer_id     String,
    charge_id       String,
    description     String,
    amount_cents    Int64,
    currency        String,
    occurred_at     DateTime('UTC'),
    synced_at       DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/platform_usage_charges_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, usage_record_id);

CREATE TABLE IF NOT EXISTS revtrack.platform_usage_charges ON CLUSTER revtrack AS revtrack.platform_usage_charges_local
ENGINE = Distributed(revtrack, revtrack, platform_usage_charges_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.usage_events_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    event_id     String,
    customer_id  String,
    name         String,
    quantity     Int64,
    occurred_at  DateTime('UTC'),
    received_at  DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/usage_events_local', '{replica}', received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, event_id);

CREATE TABLE IF NOT EXISTS revtrack.usage_events ON CLUSTER revtrack AS revtrack.usage_events_local
ENGINE = Distributed(revtrack, revtrack, usage_events_local, cityHash64(concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))));

CREATE TABLE IF NOT EXISTS revtrack.sync_runs ON CLUSTER revtrack (
    run_id             String,
    workspace_id       String,
    app_id             String,
    trigger            Enum8('schedule' = 1, 'manual' = 2),
    status             Enum8('running' = 1, 'succeeded' = 2, 'failed' = 3, 'partial' = 4),
    started_at         DateTime('UTC'),
    finished_at        Nullable(DateTime('UTC')),
    events_count       UInt64,
    transactions_count UInt64,
    coverage_from      Nullable(DateTime('UTC')),
    coverage_through   Nullable(DateTime('UTC')),
    truncated          UInt8,
    error              String,
    version            UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/sync_runs', '{shard}-{replica}', version)
ORDER BY (workspace_id, app_id, run_id);

CREATE TABLE IF NOT EXISTS revtrack.sync_cursors ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    stream       String,
    cursor       String,
    window_end   DateTime('UTC'),
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/sync_cursors', '{shard}-{replica}', version)
ORDER BY (workspace_id, app_id, stream);
