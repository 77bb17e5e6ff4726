package tracking

// Queries of one acquisition's journey (journey.go); the rules of sql.go apply.

// journeyAcquisition reads the first touch of the acquisitions with one ID, earliest first (an ID
// is the browser's own, so two sources hold the same one only when one browser was tracked by two
// sources of the workspace). The optional source condition goes between the base and the end.
const (
	journeyAcquisitionBase = `SELECT source_id, acquisition_id, first_at, last_at, views, tracker_ref, utm_source, utm_medium,
utm_campaign, utm_term, utm_content, gclid, gbraid, wbraid, landing_url, referrer
FROM (` + acquisitionsMerged + `
    WHERE workspace_id = ? AND has(?, app_id) AND acquisition_id = ?`
	journeyAcquisitionEnd = `
    GROUP BY source_id, acquisition_id
)
ORDER BY first_at, source_id
LIMIT 1`
)

// journeySessions summarises the acquisition's browser sessions (the session ID sessionize gave
// each browser event), oldest first; each event ID counts once.
const journeySessions = `SELECT session_id, min(toUInt64(occurred_at) * 1000 + occurred_ms) AS first_ms,
    max(toUInt64(occurred_at) * 1000 + occurred_ms), uniqExactIf(event_id, name = 'page_view'), uniqExact(event_id),
    argMin(path, toUInt64(occurred_at) * 1000 + occurred_ms)
FROM browser_events
WHERE workspace_id = ? AND has(?, app_id) AND source_id = ? AND acquisition_id = ?
GROUP BY session_id
ORDER BY first_ms, session_id`

// journeyShops lists the shops the acquisition joined: those named by a verified server event that
// carried the acquisition's own ID (resolved "event"), each with the earliest such event. Events
// naming only the shop were attributed through that join and are no join themselves. The
// acquisition is matched outside FINAL (a later version may attribute an event anew); the optional
// condition on the acquisition's source goes before the end.
const (
	journeyShopsBase = `SELECT shop_domain, min(t) AS first_ms, argMin(event_name, t)
FROM (
    SELECT shop_domain, toUInt64(occurred_at) * 1000 + occurred_ms AS t, toString(name) AS event_name,
        toString(acquisition_resolved_by) AS resolved_by, acquisition_id, acquisition_source_id
    FROM funnel_events FINAL
    WHERE workspace_id = ? AND has(?, app_id)
)
WHERE acquisition_id = ? AND shop_domain != '' AND resolved_by = 'event'`
	andAcquisitionSourceID = ` AND acquisition_source_id = ?`
	journeyShopsEnd        = `
GROUP BY shop_domain
ORDER BY first_ms, shop_domain`
)
