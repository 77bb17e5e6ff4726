-- Platform data synced from the partner API. Amounts are integer minor units with their currency;
-- currencies are never summed. Every synced row is keyed on the platform's own ID, so re-syncing an
-- overlapping window replaces rather than duplicates (version = sync time in microseconds).

-- Access to a workspace's partner organization; the token is AES-GCM ciphertext, never plaintext.
CREATE TABLE IF NOT EXISTS partner_connections (
    workspace_id     String,
    organization_id  String,
    access_token_enc String,
    api_base_url     String,
    created_at       DateTime('UTC'),
    updated_at       DateTime('UTC'),
    version          UInt64,
    deleted          UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY workspace_id;

-- Customers: one per (app, shop) install relationship.
CREATE TABLE IF NOT EXISTS platform_customers (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, customer_id);

-- Subscription, one-time and usage-capped charges as last seen in lifecycle events.
CREATE TABLE IF NOT EXISTS platform_charges (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, charge_id);

-- The partner API's app events (installs, uninstalls, charge lifecycle, usage, credits).
CREATE TABLE IF NOT EXISTS platform_lifecycle_events (
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
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, event_key);

-- Payout-side transactions. processing_fee_cents is null where the API does not report it.
CREATE TABLE IF NOT EXISTS platform_transactions (
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
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, transaction_id);

-- Usage charges applied by the platform (observed usage charges).
CREATE TABLE IF NOT EXISTS platform_usage_charges (
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
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, usage_record_id);

-- Usage events received from the publisher (usage activity; never proof of completeness).
CREATE TABLE IF NOT EXISTS usage_events (
    workspace_id String,
    app_id       String,
    event_id     String,
    customer_id  String,
    name         String,
    quantity     Int64,
    occurred_at  DateTime('UTC'),
    received_at  DateTime('UTC')
) ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, event_id);

CREATE TABLE IF NOT EXISTS sync_runs (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, run_id);

-- Where each incremental stream stopped, so the next run resumes rather than re-reads history.
CREATE TABLE IF NOT EXISTS sync_cursors (
    workspace_id String,
    app_id       String,
    stream       String,
    cursor       String,
    window_end   DateTime('UTC'),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, stream);
