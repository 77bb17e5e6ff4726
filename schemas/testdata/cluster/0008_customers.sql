/* on one replica of every shard */ ALTER TABLE revtrack.platform_customers_local ADD COLUMN public_id String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_customers ADD COLUMN public_id String DEFAULT '';

CREATE TABLE IF NOT EXISTS revtrack.customer_exclusions ON CLUSTER revtrack (
    workspace_id String,
    shop_domain  String,
    app_id       String,
    excluded     UInt8,
    reason       String,
    updated_at   DateTime('UTC'),
    version      UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/revtrack/customer_exclusions', '{shard}-{replica}', version)
ORDER BY (workspace_id, shop_domain, app_id);
