-- Why a mapping was disabled, as a closed vocabulary the setup can act on (disabled_reason is the
-- text shown to users): 'user' (disabled by a user on its connection and account; it may be
-- re-enabled), 'account_change' or 'disconnect' (the connection's account changed or the connection
-- ended; the mapping can never be re-enabled, a new one must be created), '' while enabled. Rows
-- written before this column read ''; the setup then falls back to the disabled reason's text
-- (docs/ADS_UPLOAD.md "Mappings"). ad_mappings is no materialized view's target, so a column may
-- be added.
ALTER TABLE ad_mappings ADD COLUMN disabled_cause String DEFAULT '';
