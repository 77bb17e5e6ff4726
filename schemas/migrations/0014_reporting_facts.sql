-- What the summary sums over its range, ordered by time (docs/REPORTING_PERFORMANCE.md). The summary
-- adds up usage sales over the trailing 30 days and the range, and observed usage charges over the
-- range, with FINAL (a re-synced row must not count twice). The tables it read are partitioned by
-- month but ordered by customer or by the platform's IDs, so a 30-day range read and merged every
-- row of the two or three months it touches. The copies below are ordered by time within a
-- workspace's app, so the range is one key range, and they keep only the columns the sums need.
--
-- Like the reporting copies (0011), each is filled by a materialized view from every insert into
-- its source and is a replacing table with the source's version column. Its sorting key is the
-- source's row ID preceded by the row's instant, which never changes between a row's versions (it
-- is the source's partition key), so FINAL collapses exactly the versions the source's FINAL does.
-- Rows landed before the view existed are copied by running the view's SELECT into the table
-- (docs/REPORTING_PERFORMANCE.md, "Existing databases").

-- Usage sales (usage MRR, billed usage, concentration).
CREATE TABLE IF NOT EXISTS reporting_usage_sales (
    workspace_id   String,
    app_id         String,
    created_at     DateTime('UTC'),
    transaction_id String,
    public_id      String,
    currency       String,
    gross_cents    Int64,
    net_cents      Int64,
    synced_at      DateTime('UTC')
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, app_id, created_at, transaction_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_usage_sales_mv TO reporting_usage_sales AS
SELECT workspace_id, app_id, created_at, transaction_id,
    concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id, currency, gross_cents,
    net_cents, synced_at
FROM platform_transactions
WHERE type = 'usage';

-- Observed usage charges (docs/METRICS.md 3.11), with what the test and customer-scope conditions
-- read.
CREATE TABLE IF NOT EXISTS reporting_observed_usage (
    workspace_id    String,
    app_id          String,
    occurred_at     DateTime('UTC'),
    usage_record_id String,
    customer_id     String,
    charge_id       String,
    currency        String,
    amount_cents    Int64,
    test            UInt8,
    synced_at       DateTime('UTC')
) ENGINE = ReplacingMergeTree(synced_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (workspace_id, app_id, occurred_at, usage_record_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_observed_usage_mv TO reporting_observed_usage AS
SELECT workspace_id, app_id, occurred_at, usage_record_id, customer_id, charge_id, currency, amount_cents, test, synced_at
FROM platform_usage_charges;
