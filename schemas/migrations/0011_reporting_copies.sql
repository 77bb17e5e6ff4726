-- What the reporting API reads (docs/REPORTING_PERFORMANCE.md). The platform tables are keyed by
-- the platform's own IDs, so a customer's rows are spread over the whole table, and the summary's
-- facts are spread over wide rows. The tables below hold the same rows again, laid out for the
-- reads: per customer, ordered by the public customer ID (the customer list's order, so that a
-- page of customers is one key range), and compact facts for the summary.
--
-- The per-customer copies use granules of 1,024 rows rather than 8,192: a page of customers or one
-- customer is a few short key ranges, and each range reads whole granules.
--
-- Each copy is filled by a materialized view from every insert into its platform table from the
-- moment the view exists; rows landed before are not copied (docs/REPORTING_PERFORMANCE.md gives
-- the one-off INSERT … SELECT for a database that already holds platform data). The copies are
-- replacing tables like their sources, and the reporting API de-duplicates them as it does the
-- sources (docs/METRICS.md 1.3). public_id is schemas.CustomerPublicID(app_id, customer_id).

-- Each subscription charge's state-changing lifecycle events and its customer's uninstalls, as the
-- customer and charge derivation saw them (docs/METRICS.md 2.1), so that the summary reads a
-- charge's state on any date from the charge row alone. A key is toUInt64(occurred_at) * 16 + kind,
-- kind in the replay order ACCEPTED 1, ACTIVATED 2, UNFROZEN 3, FROZEN 4, CANCELED 5, DECLINED 6,
-- EXPIRED 7 (schemas.ChargeStateEventKey). Rows written without them (states_derived = 0: rows of
-- an earlier derivation, or written by other means) are read with the events instead.
ALTER TABLE platform_charges ADD COLUMN state_events Array(UInt64) DEFAULT emptyArrayUInt64();

ALTER TABLE platform_charges ADD COLUMN customer_uninstalls Array(DateTime('UTC')) DEFAULT emptyArrayDateTime();

ALTER TABLE platform_charges ADD COLUMN states_derived UInt8 DEFAULT 0;

-- Customers by public ID: the list's order, and the detail's lookup.
CREATE TABLE IF NOT EXISTS reporting_customers (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, public_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_customers_mv TO reporting_customers AS
SELECT workspace_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    app_id, customer_id, shop_domain, shop_name, status, first_installed_at, last_event_at, version
FROM platform_customers;

CREATE TABLE IF NOT EXISTS reporting_charges (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_charges_mv TO reporting_charges AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status, end_reason, test, trial_days,
    accepted_at, activated_at, ended_at, state_events, customer_uninstalls, states_derived, version
FROM platform_charges;

CREATE TABLE IF NOT EXISTS reporting_events (
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
) ENGINE = ReplacingMergeTree(synced_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, event_key)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_events_mv TO reporting_events AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events;

CREATE TABLE IF NOT EXISTS reporting_transactions (
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
) ENGINE = ReplacingMergeTree(synced_at)
ORDER BY (workspace_id, app_id, public_id, created_at, transaction_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_transactions_mv TO reporting_transactions AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    created_at, transaction_id, customer_id, type, currency, gross_cents, platform_fee_cents, net_cents, billing_interval, synced_at
FROM platform_transactions;

-- The evidence rule's input (docs/METRICS.md 2.3): one row per positive subscription sale, ordered
-- by time so that an evidence window is one key range. Identical rows (a re-synced sale) collapse;
-- the summary reads maxima, which duplicates do not change.
CREATE TABLE IF NOT EXISTS reporting_payments (
    workspace_id String,
    app_id       String,
    created_at   DateTime('UTC'),
    public_id    String,
    currency     String
) ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, app_id, created_at, public_id, currency);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_payments_mv TO reporting_payments AS
SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency
FROM platform_transactions
WHERE type = 'subscription' AND gross_cents > 0;

-- Usage sales (usage MRR, billed usage, concentration), partitioned by month like the source so
-- that FINAL merges only the months a range adds up.
CREATE TABLE IF NOT EXISTS reporting_usage_transactions (
    workspace_id   String,
    app_id         String,
    public_id      String,
    transaction_id String,
    created_at     DateTime('UTC'),
    currency       String,
    gross_cents    Int64,
    net_cents      Int64,
    synced_at      DateTime('UTC')
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, public_id, transaction_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_usage_transactions_mv TO reporting_usage_transactions AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    transaction_id, created_at, currency, gross_cents, net_cents, synced_at
FROM platform_transactions
WHERE type = 'usage';

CREATE TABLE IF NOT EXISTS reporting_usage_charges (
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
) ENGINE = ReplacingMergeTree(synced_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, usage_record_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_usage_charges_mv TO reporting_usage_charges AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, usage_record_id, customer_id, charge_id, amount_cents, currency, test, synced_at
FROM platform_usage_charges;

CREATE TABLE IF NOT EXISTS reporting_usage_events (
    workspace_id String,
    app_id       String,
    public_id    String,
    occurred_at  DateTime('UTC'),
    event_id     String,
    customer_id  String,
    name         String,
    quantity     Int64,
    received_at  DateTime('UTC')
) ENGINE = ReplacingMergeTree(received_at)
ORDER BY (workspace_id, app_id, public_id, occurred_at, event_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_usage_events_mv TO reporting_usage_events AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_id, customer_id, name, quantity, received_at
FROM usage_events;
