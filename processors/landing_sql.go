package processors

// Inserts of the landing consumers. Column lists are explicit (required by the driver) and in the
// order the row functions return values.
const (
	insertServerEvents = `INSERT INTO server_events (event_id, source_id, workspace_id, app_id, acquisition_id, name,
customer_ref, amount_cents, currency, occurred_at, occurred_ms, received_at)`

	insertBrowserEvents = `INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id,
session_id, name, occurred_at, occurred_ms, received_at, url, path, title, referrer, returning, first_tracker_ref,
first_utm_source, first_utm_medium, first_utm_campaign, first_utm_term, first_utm_content, first_gclid, first_gbraid,
first_wbraid, first_landing_url, first_referrer, platform_shop, platform_user_id, platform_identity_source,
properties, user_agent)`
)
