CREATE TABLE IF NOT EXISTS revtrack.sealed_secrets ON CLUSTER revtrack (
    kind         Enum8('ad_refresh_token' = 1, 'partner_access_token' = 2),
    owner_id     String,
    workspace_id String,
    sealed       String,
    key_id       String,
    stored_at    DateTime('UTC'),
    version      UInt64
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/revtrack/sealed_secrets', '{shard}-{replica}')
ORDER BY (kind, owner_id, version);

INSERT INTO sealed_secrets (kind, owner_id, workspace_id, sealed, key_id, stored_at, version)
SELECT 'ad_refresh_token', connection_id, argMax(workspace_id, version), argMax(refresh_token_enc, version) AS s,
    argMax(encryption_key_id, version), max(updated_at), max(version)
FROM ad_connections GROUP BY connection_id HAVING s != '';

INSERT INTO sealed_secrets (kind, owner_id, workspace_id, sealed, key_id, stored_at, version)
SELECT 'partner_access_token', workspace_id, workspace_id, argMax(access_token_enc, version) AS s,
    splitByChar(':', argMax(access_token_enc, version))[2], max(updated_at), max(version)
FROM partner_connections GROUP BY workspace_id HAVING s != '' AND argMax(deleted, version) = 0;

ALTER TABLE revtrack.ad_connections UPDATE refresh_token_enc = '' WHERE refresh_token_enc != '';

ALTER TABLE revtrack.partner_connections UPDATE access_token_enc = '' WHERE access_token_enc != '';
