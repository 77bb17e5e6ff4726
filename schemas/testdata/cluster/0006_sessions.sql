CREATE TABLE IF NOT EXISTS revtrack.session_state_local ON CLUSTER revtrack (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/session_state_local', '{replica}', version)
PARTITION BY toYYYYMM(last_event_at)
ORDER BY (source_id, acquisition_id);

CREATE TABLE IF NOT EXISTS revtrack.session_state ON CLUSTER revtrack AS revtrack.session_state_local
ENGINE = Distributed(revtrack, revtrack, session_state_local, cityHash64(source_id, acquisition_id));
