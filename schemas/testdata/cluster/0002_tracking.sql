CREATE TABLE IF NOT EXISTS revtrack.browser_events_local ON CLUSTER revtrack (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/browser_events_local', '{replica}', received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, toDate(occurred_at), event_id);

CREATE TABLE IF NOT EXISTS revtrack.browser_events ON CLUSTER revtrack AS revtrack.browser_events_local
ENGINE = Distributed(revtrack, revtrack, browser_events_local, cityHash64(source_id, acquisition_id));

CREATE TABLE IF NOT EXISTS revtrack.server_events_local ON CLUSTER revtrack (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/server_events_local', '{replica}', received_at)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (source_id, event_id);

CREATE TABLE IF NOT EXISTS revtrack.server_events ON CLUSTER revtrack AS revtrack.server_events_local
ENGINE = Distributed(revtrack, revtrack, server_events_local, cityHash64(source_id, event_id));

CREATE TABLE IF NOT EXISTS revtrack.sessions_local ON CLUSTER revtrack (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/sessions_local', '{replica}', version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (source_id, acquisition_id, session_id);

CREATE TABLE IF NOT EXISTS revtrack.sessions ON CLUSTER revtrack AS revtrack.sessions_local
ENGINE = Distributed(revtrack, revtrack, sessions_local, cityHash64(source_id, acquisition_id));

CREATE TABLE IF NOT EXISTS revtrack.acquisition_links_local ON CLUSTER revtrack (
    source_id      String,
    acquisition_id String,
    workspace_id   String,
    app_id         String,
    shop_domain    String,
    first_event_id String,
    linked_at      DateTime('UTC'),
    version        UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/acquisition_links_local', '{replica}', version)
ORDER BY (source_id, acquisition_id, shop_domain);

CREATE TABLE IF NOT EXISTS revtrack.acquisition_links ON CLUSTER revtrack AS revtrack.acquisition_links_local
ENGINE = Distributed(revtrack, revtrack, acquisition_links_local, cityHash64(workspace_id, app_id, shop_domain));
