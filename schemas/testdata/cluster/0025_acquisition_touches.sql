CREATE TABLE IF NOT EXISTS revtrack.acquisition_touches_local ON CLUSTER revtrack (
    workspace_id   String,
    app_id         String,
    source_id      String,
    acquisition_id String,
    event_month    Date,
    acquisition_key FixedString(16),
    first_at       DateTime('UTC'),
    first_ms       UInt16,
    first_event_id String,
    tracker_ref    String,
    utm_source     String,
    utm_medium     String,
    utm_campaign   String,
    gclid          String,
    gbraid         String,
    wbraid         String,
    landing_url    String,
    version        UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/acquisition_touches_local', '{replica}', version)
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

CREATE TABLE IF NOT EXISTS revtrack.acquisition_touches ON CLUSTER revtrack AS revtrack.acquisition_touches_local
ENGINE = Distributed(revtrack, revtrack, acquisition_touches_local, cityHash64(source_id, acquisition_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.acquisition_touches_mv ON CLUSTER revtrack TO revtrack.acquisition_touches_local AS
SELECT
    workspace_id,
    app_id,
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    sipHash128(concat(toString(length(source_id)), ':', source_id, acquisition_id)) AS acquisition_key,
    min(occurred_at) AS first_at,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 1) AS first_ms,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 2) AS first_event_id,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 3) AS tracker_ref,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 4) AS utm_source,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 5) AS utm_medium,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 6) AS utm_campaign,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 7) AS gclid,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 8) AS gbraid,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 9) AS wbraid,
    tupleElement(argMin((occurred_ms, event_id, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
        first_gclid, first_gbraid, first_wbraid, first_landing_url), (occurred_at, occurred_ms, event_id)), 10) AS landing_url,
    bitOr(bitShiftLeft(toUInt64(4294967295 - toUInt32(first_at)), 32),
        bitOr(bitShiftLeft(toUInt64(1023 - first_ms), 22),
            toUInt64(4194303 - bitShiftRight(reinterpretAsUInt32(reverse(substring(concat(first_event_id, '\0\0\0'), 1, 3))), 2)))) AS version
FROM revtrack.browser_events_local
GROUP BY workspace_id, app_id, source_id, acquisition_id, event_month;
