-- Copies of the charge facts (0027) and the observed usage days (0026) in granules of 1,024 rows
-- instead of 8,192, which the reports read instead of them (docs/REPORTING_PERFORMANCE.md, "Fine
-- granules"). A report reads one key range of each per app (the charges from a retired day on, the
-- days of a range), and every part adds a partial granule at both ends of each range: on the bench
-- data the summary read 46,815 charge-fact rows for 27,141 and 287,373 day rows for 189,506, and
-- FINAL merged all of them. The granularity of a table is fixed when it is created, so the tables
-- are copied rather than altered.
--
-- Full copies (no filter), with the sources' sorting keys and versions, so FINAL over a copy keeps
-- exactly the rows it keeps over the source. The landing consumer and the backfill still write the
-- sources (processors/platform_days.go, schemas/reportingbackfill), and the views copy every row
-- they insert; `revtrack migrate` fills a copy created on a database with history.
CREATE TABLE IF NOT EXISTS reporting_charge_facts_fine (
    workspace_id        String,
    app_id              String,
    retired             UInt32,
    public_id           String,
    charge_id           String,
    live                UInt8,
    amount_cents        Int64,
    currency            String,
    annual              UInt8,
    frozen              UInt8,
    trial_days          UInt16,
    accepted            UInt32,
    activated           UInt32,
    ended               UInt32,
    states_derived      UInt8,
    state_events        Array(UInt64),
    customer_uninstalls Array(UInt32),
    payments            Array(UInt32),
    payment_currencies  Array(String),
    version             UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_charge_facts_fine_mv TO reporting_charge_facts_fine AS
SELECT workspace_id, app_id, retired, public_id, charge_id, live, amount_cents, currency, annual, frozen, trial_days,
    accepted, activated, ended, states_derived, state_events, customer_uninstalls, payments, payment_currencies, version
FROM reporting_charge_facts;

CREATE TABLE IF NOT EXISTS reporting_observed_days_fine (
    workspace_id String,
    app_id       String,
    day          UInt32,
    public_id    String,
    charge_id    String,
    currency     String,
    records      UInt64,
    amount_cents Int64,
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, day, public_id, charge_id, currency)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_observed_days_fine_mv TO reporting_observed_days_fine AS
SELECT workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents, version
FROM reporting_observed_days;
