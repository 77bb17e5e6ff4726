package processors

// SQL of the identity join. Column lists are explicit (required by the driver) and in the order the
// row functions return values. Input is only ever bound with the driver's client-side binding; the
// shop lists are bound as lists of (workspace_id, app_id, shop_domain) tuples.
const (
	insertAcquisitionLinks = `INSERT INTO acquisition_links (source_id, acquisition_id, workspace_id, app_id, shop_domain,
first_event_id, linked_at, version)`

	insertFunnelEvents = `INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, occurred_ms,
acquisition_source_id, acquisition_id, acquisition_resolved_by, shop_domain, amount_cents, currency, version)`

	// selectShopLinks reads the first link of each shop: the partial states of every insert are
	// merged here, whether or not ClickHouse merged the parts yet.
	selectShopLinks = `SELECT workspace_id, app_id, shop_domain, tupleElement(link, 1), tupleElement(link, 2),
tupleElement(link, 3), tupleElement(link, 4)
FROM (
    SELECT workspace_id, app_id, shop_domain, argMinMerge(first_link) AS link
    FROM shop_attribution
    WHERE (workspace_id, app_id, shop_domain) IN (?)
    GROUP BY workspace_id, app_id, shop_domain
)`

	// selectShopFunnelRows reads the latest version of every row of the given shops that does not
	// carry its own acquisition. Filtering on acquisition_resolved_by before taking the latest
	// version is safe because an event's own acquisition never changes: an event's rows are either
	// all 'event' or none is. It scans funnel_events' shop column (the table is ordered by event);
	// it runs once per batch that names shops, and server events are few next to browser events.
	selectShopFunnelRows = `SELECT workspace_id, source_id, app_id, event_id, toString(name), occurred_at, occurred_ms,
acquisition_source_id, acquisition_id, toString(acquisition_resolved_by), shop_domain, amount_cents, currency, version
FROM funnel_events
WHERE (workspace_id, app_id, shop_domain) IN (?) AND acquisition_resolved_by != 'event'
ORDER BY source_id, event_id, version DESC
LIMIT 1 BY source_id, event_id`
)
