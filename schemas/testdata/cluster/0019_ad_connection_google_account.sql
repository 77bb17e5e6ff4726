ALTER TABLE revtrack.ad_connections ADD COLUMN google_account_id String DEFAULT '';

ALTER TABLE revtrack.ad_connections ADD COLUMN google_account_email String DEFAULT '';
