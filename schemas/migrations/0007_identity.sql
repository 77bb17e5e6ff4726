-- Identity join: first touch per acquisition, first acquisition per shop, and the funnel's view of
-- verified server events. All three are rebuilt from data that is already deduplicated or is
-- idempotent to re-insert, so a redelivered batch never changes a result.

-- First touch per acquisition (browser), maintained by acquisitions_mv from every insert into
-- browser_events. Only the idempotent aggregates are used (min, max, argMin, uniqExact over event
-- IDs, never count), so the sessionizer writing a batch twice changes nothing. argMin orders by
-- (occurred_at, occurred_ms, event_id): the earliest event wins, and two events in the same
-- millisecond are ordered by ID, so the result does not depend on insertion order.
-- One row per acquisition and month of its events (event_month): retention drops monthly
-- partitions like the raw events they summarise, and readers merge the months with -Merge.
-- The row is keyed by (source_id, acquisition_id); workspace_id and app_id lead the sorting key
-- because readers filter by them, and they must be in it (current ClickHouse refuses plain columns
-- outside the key of an AggregatingMergeTree). A source belongs to one app and workspace, so they
-- do not split any acquisition.
-- A materialized view only sees inserts made after it exists: browser events landed before this
-- migration are not summarised (run the view's SELECT as INSERT INTO acquisitions … once per
-- month of browser_events to backfill; it is idempotent).
CREATE TABLE IF NOT EXISTS acquisitions (
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
) ENGINE = AggregatingMergeTree()
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS acquisitions_mv TO acquisitions AS
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
FROM browser_events
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id;

-- The first acquisition linked to each shop of an app: the first touch carried to the shop, used to
-- resolve server events that name only the shop (customerRef). Maintained by shop_attribution_mv
-- from every insert into acquisition_links (written by the identity-join consumer). first_link is
-- the tuple (source_id, acquisition_id, first_event_id, linked_at) of the link with the smallest
-- (linked_at, first_event_id, source_id, acquisition_id): the earliest link wins, ties are broken
-- by IDs, and re-inserting links (replays) cannot move it. AggregatingMergeTree with argMin rather
-- than ReplacingMergeTree, because a replacing version cannot express the ID tie-break and its
-- readers would still need argMin. One tuple, not a column per field, so the fields always come
-- from the same link (and a column named like its source column would shadow it in the view).
CREATE TABLE IF NOT EXISTS shop_attribution (
    workspace_id String,
    app_id       String,
    shop_domain  String,
    first_link   AggregateFunction(argMin, Tuple(String, String, String, DateTime('UTC')), Tuple(DateTime('UTC'), String, String, String))
) ENGINE = AggregatingMergeTree()
ORDER BY (workspace_id, app_id, shop_domain);

CREATE MATERIALIZED VIEW IF NOT EXISTS shop_attribution_mv TO shop_attribution AS
SELECT
    workspace_id,
    app_id,
    shop_domain,
    argMinState((source_id, acquisition_id, first_event_id, linked_at), (linked_at, first_event_id, source_id, acquisition_id)) AS first_link
FROM acquisition_links
GROUP BY workspace_id, app_id, shop_domain;

-- One row per verified server event with the acquisition it is attributed to: its own
-- acquisitionId ('event'), else the first acquisition linked to its shop ('shop_link'), else none
-- (''). acquisition_source_id is the source that acquisition was captured by (a shop link may
-- come from another source of the same app). Attribution fields (tracker_ref, UTM, click IDs) are
-- not copied: readers join acquisitions at query time, so browser history that lands late still
-- attributes. ReplacingMergeTree keyed on (source_id, event_id) so duplicates count once; version
-- ranks resolutions, so the best one survives whatever order rows are written in:
-- 'event' = 2^64-1 (never changes), 'shop_link' = 2^62 - linked_at seconds (an earlier first
-- link ranks higher; equal versions keep the last written, which saw the most links), '' = 0.
CREATE TABLE IF NOT EXISTS funnel_events (
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
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, event_id);
