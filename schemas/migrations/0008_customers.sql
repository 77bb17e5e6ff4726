-- Customers get a public identifier that is unique across apps (the platform's shop ID is not: a
-- shop that installed two apps is two customers). It is derived, never random:
-- schemas.CustomerPublicID(app_id, customer_id).
ALTER TABLE platform_customers ADD COLUMN public_id String DEFAULT '';

-- Customers a workspace keeps out of its aggregate figures (its own development stores, partners'
-- stores). Keyed by shop domain because that is what a publisher knows; app_id '' excludes the shop
-- in every app. A lifted exclusion is a newer row with excluded = 0, so the history stays.
CREATE TABLE IF NOT EXISTS customer_exclusions (
    workspace_id String,
    shop_domain  String,
    app_id       String,
    excluded     UInt8,
    reason       String,
    updated_at   DateTime('UTC'),
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, shop_domain, app_id);
