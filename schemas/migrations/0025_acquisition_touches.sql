-- Each acquisition's first touch as plain columns, one row per acquisition and month of its events
-- (docs/REPORTING_PERFORMANCE.md, "First touches as plain rows"). Attribution (docs/METRICS.md 10)
-- needs, per acquisition, its first event's time and channel; acquisitions (0007) keeps them as
-- argMin states with a (time, millisecond, event ID) tuple, and ClickHouse 18.16 spends most of an
-- attribution request deserialising and merging those states and grouping by three strings. Here
-- the view keeps, per insert and per acquisition and month, only the earliest event's values, so a
-- reader de-duplicates plain columns by a fixed-size key.
--
-- ReplacingMergeTree(version): version orders an acquisition's rows so that the earliest touch is
-- the greatest: from the high bits, its first event's time in seconds (32 bits), its millisecond (10
-- bits), and the first 22 bits of its event ID (order-preserving), each inverted. Merges thus keep
-- the row argMin would pick, and an event that lands late but happened earlier replaces the row.
-- Readers never rely on merges: they take, per acquisition_key, over every row and month, the row
-- of greatest version and the smallest first_at, which is acquisitions' -Merge result. Two events of
-- one browser in the same millisecond whose IDs share their first 22 bits (two bytes and a bit more),
-- landed in different inserts, tie: a merge then keeps the later insert's row and a reader either,
-- where argMin keeps the smaller ID. Within one insert the view's argMin decides exactly, and the
-- tracker repeats a browser's first_* values on each of its events, so both rows normally carry the
-- same channel.
--
-- acquisition_key is (source_id, acquisition_id) hashed to 128 bits (length-prefixed, so no two
-- pairs share an input): on 18.16 grouping by it costs a fraction of grouping by the strings, and
-- the readers compute the same key of a shop's first link and of a funnel event's acquisition
-- (query/reporting/attribution_sql.go, acquisitionKeySQL).
--
-- A table of its own, not columns of acquisitions: on 18.16 a view must write every column of its
-- TO table and a migration cannot replace acquisitions_mv (see 0015). Partitioned by month like
-- acquisitions, so retention drops its months with the browser events (it holds click IDs and
-- landing URLs; processors/retention.go) and the first touch stays the earliest stored event.
-- The view has no WHERE (schemas.Copies would take it for a copy) and only min/argMin, so
-- summarising a month of browser_events again adds rows equal to those it has:
-- schemas/reportingbackfill fills it for browser events landed before this migration, month by
-- month (`revtrack migrate`, and `revtrack admin reporting backfill`).
CREATE TABLE IF NOT EXISTS acquisition_touches (
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
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

-- The first touch's values come from one argMin over a tuple (written once per column: 18.16
-- computes an aggregate that appears several times once, and a view may write no column its table
-- lacks). Output names differ from browser_events' columns, which they would otherwise shadow.
CREATE MATERIALIZED VIEW IF NOT EXISTS acquisition_touches_mv TO acquisition_touches AS
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
FROM browser_events
GROUP BY workspace_id, app_id, source_id, acquisition_id, event_month;
