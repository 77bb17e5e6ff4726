-- The sessionizer's state: one row per browser (source, acquisition ID) holding its open session and
-- the hashes of its most recent event IDs. It is written in the same batch as the browser_events and
-- sessions rows it accounts for, after them, so a consumer that takes over a partition (restart or
-- rebalance) resumes from exactly what was written: counts and seen event IDs come from one row, so
-- a redelivered event is recognised as already counted. Times are DateTime('UTC') plus milliseconds
-- (no DateTime64 on 18.16) because the 30-minute rule must give the same answer after a reload as
-- in memory. Partitioned by the month of the last event so idle browsers expire with DROP
-- PARTITION; a browser active across months has a row per month until then, so readers take the
-- highest version, never FINAL alone.
CREATE TABLE IF NOT EXISTS session_state (
    source_id         String,
    acquisition_id    String,
    workspace_id      String,
    session_id        String,
    started_at        DateTime('UTC'),
    started_ms        UInt16,
    last_event_at     DateTime('UTC'),
    last_event_ms     UInt16,
    event_count       UInt32,
    page_view_count   UInt32,
    entry_url         String,
    exit_url          String,
    referrer          String,
    returning         UInt8,
    session_ordinal   UInt32,
    seen_event_hashes Array(UInt64),
    version           UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(last_event_at)
ORDER BY (source_id, acquisition_id);
