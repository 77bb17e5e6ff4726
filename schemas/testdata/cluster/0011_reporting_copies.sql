/* on one replica of every shard */ ALTER TABLE revtrack.platform_charges_local ADD COLUMN state_events Array(UInt64) DEFAULT emptyArrayUInt64();

/* on every node */ ALTER TABLE revtrack.platform_charges ADD COLUMN state_events Array(UInt64) DEFAULT emptyArrayUInt64();

/* on one replica of every shard */ ALTER TABLE revtrack.platform_charges_local ADD COLUMN customer_uninstalls Array(DateTime('UTC')) DEFAULT emptyArrayDateTime();

/* on every node */ ALTER TABLE revtrack.platform_charges ADD COLUMN customer_uninstalls Array(DateTime('UTC')) DEFAULT emptyArrayDateTime();

/* on one replica of every shard */ ALTER TABLE revtrack.platform_charges_local ADD COLUMN states_derived UInt8 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.platform_charges ADD COLUMN states_derived UInt8 DEFAULT 0;

CREATE TABLE IF NOT EXISTS revtrack.reporting_customers_local ON CLUSTER revtrack (
    workspace_id       String,
    public_id          String,
    app_id             String,
    customer_id        String,
    shop_domain        String,
    shop_name          String,
    status             String,
    first_installed_at Nullable(DateTime('UTC')),
    last_event_at      Nullable(DateTime('UTC')),
    version            UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_customers_local', '{replica}', version)
ORDER BY (workspace_id, public_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_customers ON CLUSTER revtrack AS revtrack.reporting_customers_local
ENGINE = Distributed(revtrack, revtrack, reporting_customers_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_customers_mv ON CLUSTER revtrack TO revtrack.reporting_customers_local AS
SELECT workspace_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    app_id, customer_id, shop_domain, shop_name, status, first_installed_at, last_event_at, version
FROM revtrack.platform_customers_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charges_local ON CLUSTER revtrack (
    workspace_id        String,
    app_id              String,
    public_id           String,
    charge_id           String,
    customer_id         String,
    kind                Enum8('subscription' = 1, 'one_time' = 2, 'usage' = 3),
    name                String,
    amount_cents        Int64,
    currency            String,
    billing_interval    Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    status              String,
    end_reason          String,
    test                UInt8,
    trial_days          UInt16,
    accepted_at         Nullable(DateTime('UTC')),
    activated_at        Nullable(DateTime('UTC')),
    ended_at            Nullable(DateTime('UTC')),
    state_events        Array(UInt64),
    customer_uninstalls Array(DateTime('UTC')),
    states_derived      UInt8,
    version             UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charges_local', '{replica}', version)
ORDER BY (workspace_id, app_id, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charges ON CLUSTER revtrack AS revtrack.reporting_charges_local
ENGINE = Distributed(revtrack, revtrack, reporting_charges_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_charges_mv ON CLUSTER revtrack TO revtrack.reporting_charges_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status, end_reason, test, trial_days,
    accepted_at, activated_at, ended_at, state_events, customer_uninstalls, states_derived, version
FROM revtrack.platform_charges_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_events_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    public_id    String,
    occurred_at  DateTime('UTC'),
    event_key    String,
    customer_id  String,
    type         String,
    charge_id    String,
    charge_name  String,
    amount_cents Nullable(Int64),
    currency     String,
    reason       String,
    description  String,
    synced_at    DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_events_local', '{replica}', synced_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, event_key)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_events ON CLUSTER revtrack AS revtrack.reporting_events_local
ENGINE = Distributed(revtrack, revtrack, reporting_events_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_events_mv ON CLUSTER revtrack TO revtrack.reporting_events_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM revtrack.platform_lifecycle_events_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_transactions_local ON CLUSTER revtrack (
    workspace_id       String,
    app_id             String,
    public_id          String,
    created_at         DateTime('UTC'),
    transaction_id     String,
    customer_id        String,
    type               Enum8('subscription' = 1, 'usage' = 2, 'one_time' = 3, 'adjustment' = 4, 'credit' = 5, 'refund' = 6),
    currency           String,
    gross_cents        Int64,
    platform_fee_cents Int64,
    net_cents          Int64,
    billing_interval   Enum8('' = 0, 'every_30_days' = 1, 'annual' = 2),
    synced_at          DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_transactions_local', '{replica}', synced_at)
ORDER BY (workspace_id, app_id, public_id, created_at, transaction_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_transactions ON CLUSTER revtrack AS revtrack.reporting_transactions_local
ENGINE = Distributed(revtrack, revtrack, reporting_transactions_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_transactions_mv ON CLUSTER revtrack TO revtrack.reporting_transactions_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    created_at, transaction_id, customer_id, type, currency, gross_cents, platform_fee_cents, net_cents, billing_interval, synced_at
FROM revtrack.platform_transactions_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_payments_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    created_at   DateTime('UTC'),
    public_id    String,
    currency     String
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_payments_local', '{replica}')
ORDER BY (workspace_id, app_id, created_at, public_id, currency);

CREATE TABLE IF NOT EXISTS revtrack.reporting_payments ON CLUSTER revtrack AS revtrack.reporting_payments_local
ENGINE = Distributed(revtrack, revtrack, reporting_payments_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_payments_mv ON CLUSTER revtrack TO revtrack.reporting_payments_local AS
SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency
FROM revtrack.platform_transactions_local
WHERE type = 'subscription' AND gross_cents > 0;

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_transactions_local ON CLUSTER revtrack (
    workspace_id   String,
    app_id         String,
    public_id      String,
    transaction_id String,
    created_at     DateTime('UTC'),
    currency       String,
    gross_cents    Int64,
    net_cents      Int64,
    synced_at      DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_usage_transactions_local', '{replica}', synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, public_id, transaction_id);

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_transactions ON CLUSTER revtrack AS revtrack.reporting_usage_transactions_local
ENGINE = Distributed(revtrack, revtrack, reporting_usage_transactions_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_usage_transactions_mv ON CLUSTER revtrack TO revtrack.reporting_usage_transactions_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    transaction_id, created_at, currency, gross_cents, net_cents, synced_at
FROM revtrack.platform_transactions_local
WHERE type = 'usage';

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_charges_local ON CLUSTER revtrack (
    workspace_id    String,
    app_id          String,
    public_id       String,
    occurred_at     DateTime('UTC'),
    usage_record_id String,
    customer_id     String,
    charge_id       String,
    amount_cents    Int64,
    currency        String,
    test            UInt8,
    synced_at       DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_usage_charges_local', '{replica}', synced_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, usage_record_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_charges ON CLUSTER revtrack AS revtrack.reporting_usage_charges_local
ENGINE = Distributed(revtrack, revtrack, reporting_usage_charges_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_usage_charges_mv ON CLUSTER revtrack TO revtrack.reporting_usage_charges_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, usage_record_id, customer_id, charge_id, amount_cents, currency, test, synced_at
FROM revtrack.platform_usage_charges_local;

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_events_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    public_id    String,
    occurred_at  DateTime('UTC'),
    event_id     String,
    customer_id  String,
    name         String,
    quantity     Int64,
    received_at  DateTime('UTC')
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_usage_events_local', '{replica}', received_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, event_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_usage_events ON CLUSTER revtrack AS revtrack.reporting_usage_events_local
ENGINE = Distributed(revtrack, revtrack, reporting_usage_events_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_usage_events_mv ON CLUSTER revtrack TO revtrack.reporting_usage_events_local AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_id, customer_id, name, quantity, received_at
FROM revtrack.usage_events_local;
