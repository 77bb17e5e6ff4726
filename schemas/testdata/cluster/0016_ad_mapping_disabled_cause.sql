ALTER TABLE revtrack.ad_mappings ADD COLUMN disabled_cause String DEFAULT '';
