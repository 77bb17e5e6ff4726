-- Sealed secrets apart from the versioned records (internal/controlplane/secrets.go). ad_connections
-- and partner_connections are replacing tables: every change writes a new version and the older
-- ones stay until a merge that may never come, so a token kept in them outlived its erasure in the
-- older versions. A sealed token now has its own row per sealing here, owned by the advertising
-- connection (connection_id) or the partner connection (workspace_id). Erasing or replacing one
-- deletes the owner's (older) rows with ALTER TABLE … DELETE and waits until none is readable; a
-- plain MergeTree, so no merge ever brings a deleted row back or keeps one as a "version".
CREATE TABLE IF NOT EXISTS sealed_secrets (
    kind         Enum8('ad_refresh_token' = 1, 'partner_access_token' = 2),
    owner_id     String,
    workspace_id String,
    sealed       String,
    key_id       String,
    stored_at    DateTime('UTC'),
    version      UInt64
) ENGINE = MergeTree
ORDER BY (kind, owner_id, version);

-- The stored tokens move over: the latest of each connection that still holds one. Run again after
-- a crash, the copy only repeats rows (the same token and version), which the next erase or
-- replacement of that owner deletes with the rest.
INSERT INTO sealed_secrets (kind, owner_id, workspace_id, sealed, key_id, stored_at, version)
SELECT 'ad_refresh_token', connection_id, argMax(workspace_id, version), argMax(refresh_token_enc, version) AS s,
    argMax(encryption_key_id, version), max(updated_at), max(version)
FROM ad_connections GROUP BY connection_id HAVING s != '';

INSERT INTO sealed_secrets (kind, owner_id, workspace_id, sealed, key_id, stored_at, version)
SELECT 'partner_access_token', workspace_id, workspace_id, argMax(access_token_enc, version) AS s,
    splitByChar(':', argMax(access_token_enc, version))[2], max(updated_at), max(version)
FROM partner_connections GROUP BY workspace_id HAVING s != '' AND argMax(deleted, version) = 0;

-- Then every version of the records forgets its token, erased ones included. The columns stay
-- (dropping one is not idempotent on 18.16) and are written empty from now on; an erase clears
-- its owner's again, should a binary older than this migration write one during a rolling upgrade.
ALTER TABLE ad_connections UPDATE refresh_token_enc = '' WHERE refresh_token_enc != '';

ALTER TABLE partner_connections UPDATE access_token_enc = '' WHERE access_token_enc != '';
