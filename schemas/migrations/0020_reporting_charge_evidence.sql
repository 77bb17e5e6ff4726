-- Payment evidence belongs to the charge it paid for, and a charge before its first billing date is
-- a trial (docs/METRICS.md 2.2, 2.3). The reporting copies of 0011 and 0014 leave out what that
-- needs: which charge a subscription sale paid for (reporting_payments, reporting_transactions) and
-- a charge's billing date (reporting_charges). A copy's view cannot be changed in place on
-- ClickHouse 18.16 (dropping and creating it again would lose the rows landed in between), so the
-- tables below hold those rows again with the missing columns; the reporting API reads them instead.
-- reporting_payments stays, unread, for a process of the previous release during a rolling upgrade.
--
-- Like the other copies, each is filled by its view from every insert into its source, and the
-- rows landed before are copied by running the view's SELECT (automatic after the migrations when a
-- copy is empty while its source is not; docs/REPORTING_PERFORMANCE.md, "Existing databases").

-- Positive subscription sales with their charge, ordered by time: what the summary's evidence
-- windows read. Identical rows (a re-synced sale) collapse; the summary reads maxima.
CREATE TABLE IF NOT EXISTS reporting_charge_payments (
    workspace_id String,
    app_id       String,
    created_at   DateTime('UTC'),
    public_id    String,
    currency     String,
    charge_id    String
) ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, app_id, created_at, public_id, currency, charge_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_charge_payments_mv TO reporting_charge_payments AS
SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency, charge_id
FROM platform_transactions
WHERE type = 'subscription' AND gross_cents > 0;

-- The same sales ordered by customer: what the customer list and detail read for a page of
-- customers (a few key ranges).
CREATE TABLE IF NOT EXISTS reporting_customer_payments (
    workspace_id String,
    app_id       String,
    public_id    String,
    created_at   DateTime('UTC'),
    currency     String,
    charge_id    String
) ENGINE = ReplacingMergeTree
ORDER BY (workspace_id, app_id, public_id, created_at, currency, charge_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_customer_payments_mv TO reporting_customer_payments AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    created_at, currency, charge_id
FROM platform_transactions
WHERE type = 'subscription' AND gross_cents > 0;

-- Each subscription charge's billing date as its latest event reported it (the first billing date
-- until the charge is first billed), by customer like reporting_charges.
CREATE TABLE IF NOT EXISTS reporting_charge_billing (
    workspace_id String,
    app_id       String,
    public_id    String,
    charge_id    String,
    billing_on   Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_charge_billing_mv TO reporting_charge_billing AS
SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    charge_id, billing_on, version
FROM platform_charges
WHERE kind = 'subscription';
