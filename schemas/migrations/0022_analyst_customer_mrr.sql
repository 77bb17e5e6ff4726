-- Daily MRR per customer and MRR movements, for analysts (docs/ANALYSTS.md,
-- analyst_customer_mrr_daily and analyst_mrr_movements). MRR is computed in Go by the reporting
-- engine (docs/METRICS.md 2 and 3: evidence windows, trials, frozen and ended charges, annual plans),
-- which no SQL view reproduces, so these views read rows the engine itself wrote
-- (processors/analystmrr, through query/reporting's timeline engine): they add up to the API.
--
-- Spans, not days: a customer's MRR in a currency is constant over long runs of days, so a row is a
-- run [from_date, to_date] (both inclusive) with one MRR, and the view expands it into days. Only
-- days with MRR > 0 or a paying customer are written. Movements are sparse and written one row per
-- customer, currency and day with a movement.
--
-- Each run of the job recomputes a whole (workspace, app) as a new generation: its rows are written
-- first, then the generation is recorded in customer_mrr_generations, and only then are generations
-- older than the previous one deleted (ALTER … DELETE, one per round). The views read only the
-- greatest recorded generation per (workspace, app), so a reader sees the previous computation or
-- the new one, whole, never both and never none (a reader that chose the previous one still finds
-- its rows until the generation after next). A workspace copy (controlplane/analystaccess) copies
-- the tables in name order: customer_mrr_generations before the rows, so the generation it records
-- is always among the rows it copies.
CREATE TABLE IF NOT EXISTS customer_mrr_generations (
    workspace_id   String,
    app_id         String,
    generation     UInt64,
    computed_at    DateTime('UTC'),
    through_date   Date,
    inputs_version String,
    customers      UInt64,
    spans          UInt64,
    movements      UInt64
) ENGINE = ReplacingMergeTree(generation)
ORDER BY (workspace_id, app_id);

CREATE TABLE IF NOT EXISTS customer_mrr_spans (
    workspace_id           String,
    app_id                 String,
    generation             UInt64,
    public_id              String,
    customer_id            String,
    shop_domain            String,
    currency               String,
    from_date              Date,
    to_date                Date,
    mrr_cents              Int64,
    subscription_mrr_cents Int64,
    usage_mrr_cents        Int64,
    paying                 UInt8,
    excluded               UInt8,
    computed_at            DateTime('UTC')
) ENGINE = MergeTree
ORDER BY (workspace_id, app_id, generation, public_id, currency, from_date);

CREATE TABLE IF NOT EXISTS customer_mrr_movements (
    workspace_id                  String,
    app_id                        String,
    generation                    UInt64,
    public_id                     String,
    customer_id                   String,
    shop_domain                   String,
    currency                      String,
    date                          Date,
    kind                          String,
    movement_cents                Int64,
    subscription_mrr_before_cents Int64,
    subscription_mrr_after_cents  Int64,
    excluded                      UInt8,
    computed_at                   DateTime('UTC')
) ENGINE = MergeTree
ORDER BY (workspace_id, app_id, generation, date, public_id, currency);

-- One row per customer, currency and day with MRR (end-of-day, as the API's interval=day points).
CREATE VIEW IF NOT EXISTS analyst_customer_mrr_daily AS
SELECT
    workspace_id,
    app_id,
    customer_id,
    public_id,
    shop_domain,
    currency,
    addDays(from_date, day_offset) AS date,
    mrr_cents,
    subscription_mrr_cents,
    usage_mrr_cents,
    paying,
    excluded,
    computed_at
FROM customer_mrr_spans
ARRAY JOIN range(toUInt32(to_date - from_date) + 1) AS day_offset
WHERE (workspace_id, app_id, generation) IN (
    SELECT workspace_id, app_id, max(generation) FROM customer_mrr_generations GROUP BY workspace_id, app_id);

-- One row per customer, currency and day with a subscription MRR movement (METRICS 3.14, daily).
CREATE VIEW IF NOT EXISTS analyst_mrr_movements AS
SELECT
    workspace_id,
    app_id,
    customer_id,
    public_id,
    shop_domain,
    currency,
    date,
    kind,
    movement_cents,
    subscription_mrr_before_cents,
    subscription_mrr_after_cents,
    excluded,
    computed_at
FROM customer_mrr_movements
WHERE (workspace_id, app_id, generation) IN (
    SELECT workspace_id, app_id, max(generation) FROM customer_mrr_generations GROUP BY workspace_id, app_id);
