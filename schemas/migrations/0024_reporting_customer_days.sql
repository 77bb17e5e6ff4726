-- Each customer's transactions per UTC day and currency, de-duplicated when they land
-- (docs/REPORTING_PERFORMANCE.md, "Customer days"). A year of daily MRR needs the usage sales of
-- 395 days, and attribution the net revenue of every transaction in its range: read from the
-- copies, ClickHouse de-duplicates millions of rows with FINAL on every request. A customer has
-- tens of usage sales on a day it has any, so one row per customer, day and currency is a fraction
-- of the rows, summed once.
--
-- A materialized view cannot fill it: a re-synced sale is a second insert of the same row, which a
-- view would add to the day's sums again. The landing consumer writes it instead
-- (processors/platform_derive.go): after each batch it recomputes, from reporting_transactions
-- FINAL, every day of every customer whose transactions the batch holds, and writes the rows with a
-- new version. A customer's records share a Kafka key, so one consumer recomputes it at a time, and
-- the latest version has seen every transaction landed before it. `revtrack migrate` fills it for a
-- database with history (schemas/reportingbackfill, the same statement over every customer).
-- day is days since the epoch (intDiv(toUInt32(created_at), 86400)), as the reporting engine counts.
CREATE TABLE IF NOT EXISTS reporting_customer_days (
    workspace_id      String,
    app_id            String,
    day               UInt32,
    public_id         String,
    currency          String,
    transactions      UInt64,
    net_cents         Int64,
    usage_sales       UInt64,
    usage_gross_cents Int64,
    usage_net_cents   Int64,
    version           UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, day, public_id, currency);
