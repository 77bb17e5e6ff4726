CREATE TABLE IF NOT EXISTS revtrack.acquisitions_local ON CLUSTER revtrack (
    source_id          String,
    acquisition_id     String,
    event_month        Date,
    workspace_id       String,
    app_id             String,
    first_seen         AggregateFunction(min, DateTime('UTC')),
    last_seen          AggregateFunction(max, DateTime('UTC')),
    first_tracker_ref  AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_utm_source   AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_utm_medium   AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_utm_campaign AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_utm_term     AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_utm_content  AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_gclid        AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_gbraid       AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_wbraid       AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_landing_url  AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    first_referrer     AggregateFunction(argMin, String, Tuple(DateTime('UTC'), UInt16, String)),
    page_views         AggregateFunction(uniqExactIf, String, UInt8),
    events             AggregateFunction(uniqExact, String)
) ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/revtrack/acquisitions_local', '{replica}')
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

CREATE TABLE IF NOT EXISTS revtrack.acquisitions ON CLUSTER revtrack AS revtrack.acquisitions_local
ENGINE = Distributed(revtrack, revtrack, acquisitions_local, cityHash64(source_id, acquisition_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.acquisitions_mv ON CLUSTER revtrack TO revtrack.acquisitions_local AS
SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    minState(occurred_at) AS first_seen,
    maxState(occurred_at) AS last_seen,
    argMinState(first_tracker_ref, (occurred_at, occurred_ms, event_id)) AS first_tracker_ref,
    argMinState(first_utm_source, (occurred_at, occurred_ms, event_id)) AS first_utm_source,
    argMinState(first_utm_medium, (occurred_at, occurred_ms, event_id)) AS first_utm_medium,
    argMinState(first_utm_campaign, (occurred_at, occurred_ms, event_id)) AS first_utm_campaign,
    argMinState(first_utm_term, (occurred_at, occurred_ms, event_id)) AS first_utm_term,
    argMinState(first_utm_content, (occurred_at, occurred_ms, event_id)) AS first_utm_content,
    argMinState(first_gclid, (occurred_at, occurred_ms, event_id)) AS first_gclid,
    argMinState(first_gbraid, (occurred_at, occurred_ms, event_id)) AS first_gbraid,
    argMinState(first_wbraid, (occurred_at, occurred_ms, event_id)) AS first_wbraid,
    argMinState(first_landing_url, (occurred_at, occurred_ms, event_id)) AS first_landing_url,
    argMinState(first_referrer, (occurred_at, occurred_ms, event_id)) AS first_referrer,
    uniqExactIfState(event_id, name = 'page_view') AS page_views,
    uniqExactState(event_id) AS events
FROM revtrack.browser_events_local
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id;

CREATE TABLE IF NOT EXISTS revtrack.shop_attribution_local ON CLUSTER revtrack (
    workspace_id String,
    app_id       String,
    shop_domain  String,
    first_link   AggregateFunction(argMin, Tuple(String, String, String, DateTime('UTC')), Tuple(DateTime('UTC'), String, String, String))
) ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/revtrack/shop_attribution_local', '{replica}')
ORDER BY (workspace_id, app_id, shop_domain);

CREATE TABLE IF NOT EXISTS revtrack.shop_attribution ON CLUSTER revtrack AS revtrack.shop_attribution_local
ENGINE = Distributed(revtrack, revtrack, shop_attribution_local, cityHash64(workspace_id, app_id, shop_domain));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.shop_attribution_mv ON CLUSTER revtrack TO revtrack.shop_attribution_local AS
SELECT
    workspace_id,
    app_id,
    shop_domain,
    argMinState((source_id, acquisition_id, first_event_id, linked_at), (linked_at, first_event_id, source_id, acquisition_id)) AS first_link
FROM revtrack.acquisition_links_local
GROUP BY workspace_id, app_id, shop_domain;

CREATE TABLE IF NOT EXISTS revtrack.funnel_events_local ON CLUSTER revtrack (
    workspace_id            String,
    source_id               String,
    app_id                  String,
    event_id                String,
    name                    Enum8('identified' = 1, 'install' = 2, 'trial_started' = 3, 'trial_converted' = 4,
                                  'paid' = 5, 'qualified' = 6, 'canceled' = 7, 'churned' = 8, 'refunded' = 9),
    occurred_at             DateTime('UTC'),
    occurred_ms             UInt16,
    acquisition_source_id   String,
    acquisition_id          String,
    acquisition_resolved_by Enum8('' = 0, 'event' = 1, 'shop_link' = 2),
    shop_domain             String,
    amount_cents            Nullable(Int64),
    currency                String,
    version                 UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/funnel_events_local', '{replica}', version)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, event_id);

CREATE TABLE IF NOT EXISTS revtrack.funnel_events ON CLUSTER revtrack AS revtrack.funnel_events_local
ENGINE = Distributed(revtrack, revtrack, funnel_events_local, cityHash64(source_id, event_id));
