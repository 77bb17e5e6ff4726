-- Click evidence per acquisition: the first non-empty gclid, gbraid and wbraid its browser events
-- carried. The tracker keeps the first click ID it observes in a browser and repeats it on every
-- later event, but a browser's first visit need not be a click: one that first came organically and
-- later through an ad has an empty first_gclid in acquisitions (the earliest event's value) although
-- it captured a click. The upload matcher reads these values and falls back to acquisitions' first_*
-- for acquisitions whose events landed before this migration (processors/upload_match_sql.go).
--
-- A table of its own rather than new columns of acquisitions: on ClickHouse 18.16 a materialized
-- view must write every column of its TO table, so adding a column to acquisitions makes
-- acquisitions_mv (which a migration cannot replace) fail every insert into browser_events.
--
-- Keyed, partitioned and merged like acquisitions (0007): one row per acquisition and month of its
-- events, read with -Merge. It holds click IDs, so retention must drop its monthly partitions with
-- the raw events (processors/retention.go, retainedTables). argMin
-- orders by (value = '', occurred_at, occurred_ms, event_id): any non-empty value sorts before every
-- empty one, then the earliest event wins with the ID tie-break of first_*, so the result does not
-- depend on insertion order and is '' only when no event carried the ID. Only argMin is used, so a
-- batch written twice changes nothing.
--
-- An acquisition-month none of whose events carried a click ID gets no row, so the table holds only
-- browsers that clicked; a missing row merges like an empty value. The condition is a HAVING, not a
-- WHERE: schemas.Copies takes any view whose SELECT has a WHERE for a reporting copy (and refuses it).
--
-- Browser events landed before this migration are not summarised: run the view's SELECT as
-- INSERT INTO acquisition_clicks (…) once per month of browser_events to backfill (idempotent).
CREATE TABLE IF NOT EXISTS acquisition_clicks (
    source_id      String,
    acquisition_id String,
    event_month    Date,
    workspace_id   String,
    app_id         String,
    click_gclid    AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String)),
    click_gbraid   AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String)),
    click_wbraid   AggregateFunction(argMin, String, Tuple(UInt8, DateTime('UTC'), UInt16, String))
) ENGINE = AggregatingMergeTree()
PARTITION BY toYYYYMM(event_month)
ORDER BY (workspace_id, app_id, source_id, acquisition_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS acquisition_clicks_mv TO acquisition_clicks AS
SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1;
