CREATE TABLE IF NOT EXISTS revtrack.acquisition_clicks_local ON CLUSTER revtrack (
    source_id      String,
    acquisition_id String,
    event_month    Date,
    workspace_id   String,
    app_id         String,
    click_gclid    AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String)),
    click_gbraid   AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String)),
    click_wbraid   AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String))
) ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/revtrack/acquisition_clicks_local', '{replica}')
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

CREATE TABLE IF NOT EXISTS revtrack.acquisition_clicks ON CLUSTER revtrack AS revtrack.acquisition_clicks_local
ENGINE = Distributed(revtrack, revtrack, acquisition_clicks_local, cityHash64(source_id, acquisition_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.acquisition_clicks_mv ON CLUSTER revtrack TO revtrack.acquisition_clicks_local AS
SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM revtrack.browser_events_local
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1;
