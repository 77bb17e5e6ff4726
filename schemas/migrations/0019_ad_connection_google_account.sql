-- The Google account that granted an advertising connection: the ID token's subject (stable) and its
-- e-mail address (for people to recognise). A reconnection by another Google account than the live
-- connection's is held until someone confirms it on a page naming both (docs/ADS_UPLOAD.md
-- "Connection"). Connections made before this column read '' (an account revtrack did not record),
-- which every reconnection treats as another account. ad_connections is no materialized view's
-- target, so columns may be added.
ALTER TABLE ad_connections ADD COLUMN google_account_id String DEFAULT '';

ALTER TABLE ad_connections ADD COLUMN google_account_email String DEFAULT '';
