-- The customer days that hold a usage sale (docs/REPORTING_PERFORMANCE.md, "Usage days"). Usage
-- MRR is a trailing 30-day sum of usage sales (METRICS 3.2), so a year of daily MRR reads 395 days
-- of them; read from reporting_customer_days, FINAL merges every customer day of those 395 days,
-- two thirds of which have no usage sale at all (a customer who paid only a subscription that day).
-- This copy holds only the rows with one, and only the usage columns.
--
-- A copy filtered by a non-key column is exact under FINAL only if no later version of a row can
-- leave the filter: here a customer day's usage_sales never decreases from one version to the next.
-- Each version is recomputed from reporting_transactions FINAL (schemas.CustomerDays), which only
-- gains transactions, and a transaction's type, time, currency and customer never change between
-- its versions; the version is taken before the read, so a greater version has seen at least as
-- much. So once a customer day has a usage sale, every later version of it has one and is copied,
-- and the latest version here is the latest there.
CREATE TABLE IF NOT EXISTS reporting_usage_days (
    workspace_id      String,
    app_id            String,
    day               UInt32,
    public_id         String,
    currency          String,
    usage_sales       UInt64,
    usage_gross_cents Int64,
    usage_net_cents   Int64,
    version           UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, day, public_id, currency);

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_usage_days_mv TO reporting_usage_days AS
SELECT workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents, version
FROM reporting_customer_days
WHERE usage_sales > 0;
