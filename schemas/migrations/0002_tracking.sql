-- Acquisition tracking. Raw events are partitioned by month so retention (180 days) is a
-- DROP PARTITION, which works on every ClickHouse version (TTL clauses do not exist on 18.16).
-- ReplacingMergeTree keyed on the event ID is the storage-side backstop of deduplication: a
-- redelivered batch or a retried event collapses to one row (readers use FINAL or uniqExact).
-- Timestamps are DateTime('UTC') plus a millisecond column, because 18.16 has no DateTime64.

CREATE TABLE IF NOT EXISTS browser_events (
    event_id                  String,
    source_id                 String,
    workspace_id              String,
    app_id                    String,
    acquisition_id            String,
    session_id                String,
    name                      String,
    occurred_at               DateTime('UTC'),
    occurred_ms               UInt16,
    received_at               DateTime('UTC'),
    url                       String,
    path                      String,
    title                     String,
    referrer                  String,
    returning                 UInt8,
    first_tracker_ref         String,
    first_utm_source          String,
    first_utm_medium          String,
    first_utm_campaign        String,
    first_utm_term            String,
    first_utm_content         String,
    first_gclid               String,
    first_gbraid              String,
    first_wbraid              String,
    first_landing_url         String,
    first_referrer            String,
    platform_shop             String,
    platform_user_id          String,
    platform_identity_source  String,
    properties                String,
    user_agent                String
) ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, toDate(occurred_at), event_id);

CREATE TABLE IF NOT EXISTS server_events (
    event_id       String,
    source_id      String,
    workspace_id   String,
    app_id         String,
    acquisition_id String,
    name           Enum8('identified' = 1, 'install' = 2, 'trial_started' = 3, 'trial_converted' = 4,
                         'paid' = 5, 'qualified' = 6, 'canceled' = 7, 'churned' = 8, 'refunded' = 9),
    customer_ref   String,
    amount_cents   Nullable(Int64),
    currency       String,
    occurred_at    DateTime('UTC'),
    occurred_ms    UInt16,
    received_at    DateTime('UTC')
) ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, event_id);

-- One row per browser session, rewritten by the sessionizer as the session grows (version is the
-- epoch milliseconds of its last event); readers take the latest version per session.
CREATE TABLE IF NOT EXISTS sessions (
    session_id      String,
    source_id       String,
    workspace_id    String,
    acquisition_id  String,
    started_at      DateTime('UTC'),
    last_event_at   DateTime('UTC'),
    event_count     UInt32,
    page_view_count UInt32,
    entry_url       String,
    exit_url        String,
    referrer        String,
    returning       UInt8,
    version         UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (source_id, acquisition_id, session_id);

-- Acquisition ID to shop, written by the identity join when a verified server event names a shop.
CREATE TABLE IF NOT EXISTS acquisition_links (
    source_id      String,
    acquisition_id String,
    workspace_id   String,
    app_id         String,
    shop_domain    String,
    first_event_id String,
    linked_at      DateTime('UTC'),
    version        UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (source_id, acquisition_id, shop_domain);
