-- Per-workspace analyst access (internal/analystaccess, docs/ANALYSTS.md): one ClickHouse user per
-- workspace that reads only its own database, a copy of the workspace's rows behind the analyst_*
-- views. A row per grant, rotation and revocation (latest version wins). The password is never
-- stored: only its SHA-256, which the users.d file the server reads holds as well, so that the file
-- can be written again from here. clickhouse_user is also the name of the workspace's database.
CREATE TABLE IF NOT EXISTS analyst_access (
    workspace_id    String,
    clickhouse_user String,
    password_sha256 String,
    created_at      DateTime('UTC'),
    rotated_at      DateTime('UTC'),
    version         UInt64,
    revoked         UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY workspace_id;
