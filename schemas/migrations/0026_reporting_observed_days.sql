-- Each customer's observed usage charges per UTC day, charge and currency, de-duplicated when they
-- land (docs/REPORTING_PERFORMANCE.md, "Observed usage days"). The summary sums the observed usage
-- charges of its range (METRICS 3.11): read from reporting_observed_usage, that is FINAL over every
-- usage record of the range on every request. One row per customer, day, charge and currency holds
-- the day's non-test records already collapsed to their latest version.
--
-- Like reporting_customer_days (0024) no materialized view fills it, since a view would add a
-- re-synced record to the day again: the landing consumer recomputes, from reporting_usage_charges
-- FINAL, every day of every customer whose usage records a batch holds, with a new version
-- (processors/platform_days.go). The charge stays in the key because a record whose charge is a
-- test charge is left out when read (the charge's test flag can land after the record).
-- `revtrack migrate` fills it for a database with history (schemas/reportingbackfill).
-- day is days since the epoch (intDiv(toUInt32(occurred_at), 86400)).
CREATE TABLE IF NOT EXISTS reporting_observed_days (
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
ORDER BY (workspace_id, app_id, day, public_id, charge_id, currency);
