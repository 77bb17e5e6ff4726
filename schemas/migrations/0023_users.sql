-- People who sign in to the console (docs/SECURITY.md, "Console sessions"). user_id is the same
-- name-based ID that workspace_members has always derived from the e-mail address, so the members
-- stored before this migration are these users. password_hash is an argon2id PHC string; the
-- password itself is never stored. A user without a password (invited, not yet accepted) has ''.
CREATE TABLE IF NOT EXISTS users (
    user_id       String,
    email         String,
    name          String,
    password_hash String,
    created_at    DateTime('UTC'),
    updated_at    DateTime('UTC'),
    version       UInt64,
    deleted       UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version)
ORDER BY user_id;

-- One-time links: invitations and password resets. Only the SHA-256 of the token is stored; the
-- token travels once, in the link's URL fragment. used_at marks a consumed link (the atomic claim is
-- a Redis SETNX, this row is the record); a row per change, latest version wins.
CREATE TABLE IF NOT EXISTS user_tokens (
    token_hash   String,
    kind         Enum8('invitation' = 1, 'password_reset' = 2),
    token_id     String,
    email        String,
    workspace_id String,
    role         String,
    created_by   String,
    created_at   DateTime('UTC'),
    expires_at   DateTime('UTC'),
    used_at      Nullable(DateTime('UTC')),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY token_hash;
