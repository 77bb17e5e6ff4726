CREATE TABLE IF NOT EXISTS revtrack.customer_mrr_generations ON CLUSTER revtrack (
    workspace_id   String,
    app_id         String,
    generation     UInt64,
    computed_at    DateTime('UTC'),
    through_date   Date,
    inputs_version String,
    customers      UInt64,
    spans          UInt64,
    movements      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/customer_mrr_generations', '{shard}-{replica}', generation)
ORDER BY (workspace_id, app_id);

CREATE TABLE IF NOT EXISTS revtrack.customer_mrr_spans ON CLUSTER revtrack (
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
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/revtrack/customer_mrr_spans', '{shard}-{replica}')
ORDER BY (workspace_id, app_id, generation, public_id, currency, from_date);

CREATE TABLE IF NOT EXISTS revtrack.customer_mrr_movements ON CLUSTER revtrack (
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
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/revtrack/customer_mrr_movements', '{shard}-{replica}')
ORDER BY (workspace_id, app_id, generation, date, public_id, currency);

CREATE VIEW IF NOT EXISTS revtrack.analyst_customer_mrr_daily ON CLUSTER revtrack AS
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
FROM revtrack.customer_mrr_spans
ARRAY JOIN range(toUInt32(to_date - from_date) + 1) AS day_offset
WHERE (workspace_id, app_id, generation) GLOBAL IN (
    SELECT workspace_id, app_id, max(generation) FROM revtrack.customer_mrr_generations GROUP BY workspace_id, app_id);

CREATE VIEW IF NOT EXISTS revtrack.analyst_mrr_movements ON CLUSTER revtrack AS
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
FROM revtrack.customer_mrr_movements
WHERE (workspace_id, app_id, generation) GLOBAL IN (
    SELECT workspace_id, app_id, max(generation) FROM revtrack.customer_mrr_generations GROUP BY workspace_id, app_id);
