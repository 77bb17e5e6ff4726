-- Control-plane records: workspaces, members, apps, keys, tracking sources, audit log.
-- Mutable records are versioned rows in ReplacingMergeTree(version): a change inserts a new row with
-- a higher version (epoch microseconds) and readers take the latest per key (FINAL or argMax). The
-- Redis cache in front of them is written through on every change, so revocation is seen at once by
-- every instance. `deleted = 1` marks a tombstone.

CREATE TABLE IF NOT EXISTS workspaces (
    workspace_id        String,
    slug                String,
    name                String,
    subscription_status Enum8('active' = 1, 'trialing' = 2, 'past_due' = 3, 'canceled' = 4, 'inactive' = 5),
    selected_app_ids    Array(String),
    created_at          DateTime('UTC'),
    updated_at          DateTime('UTC'),
    version             UInt64,
    deleted             UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY workspace_id;

CREATE TABLE IF NOT EXISTS workspace_members (
    workspace_id String,
    user_id      String,
    email        String,
    role         Enum8('owner' = 1, 'admin' = 2, 'member' = 3),
    created_at   DateTime('UTC'),
    updated_at   DateTime('UTC'),
    version      UInt64,
    deleted      UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, user_id);

-- Apps as the platform knows them; a workspace selects some of them.
CREATE TABLE IF NOT EXISTS apps (
    app_id          String,
    platform_app_id String,
    name            String,
    created_at      DateTime('UTC'),
    updated_at      DateTime('UTC'),
    version         UInt64,
    deleted         UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY app_id;

-- Workspace API keys. Only the SHA-256 of the key is stored; key_id is the public, loggable handle.
CREATE TABLE IF NOT EXISTS api_keys (
    key_id       String,
    workspace_id String,
    name         String,
    key_hash     String,
    created_by   String,
    created_at   DateTime('UTC'),
    revoked_at   Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY key_id;

-- Tracking sources with their public key (browser-safe) and the hash of the private key.
CREATE TABLE IF NOT EXISTS tracking_sources (
    source_id        String,
    workspace_id     String,
    app_id           String,
    name             String,
    allowed_origins  Array(String),
    enabled          UInt8,
    public_key       String,
    private_key_hash String,
    created_at       DateTime('UTC'),
    updated_at       DateTime('UTC'),
    version          UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY source_id;

-- Append-only record of every control-plane change. details is a JSON object without secrets.
CREATE TABLE IF NOT EXISTS audit_log (
    at           DateTime('UTC'),
    at_ms        UInt16,
    audit_id     String,
    workspace_id String,
    actor        String,
    action       String,
    target_type  String,
    target_id    String,
    details      String
) ENGINE = MergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (workspace_id, at, audit_id);
