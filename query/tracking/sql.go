package tracking

// Queries of the tracking store. They run on ClickHouse 18.16 and on current ClickHouse (no window
// functions, CTEs, DateTime64 or JSONExtract; compat_test.go runs every one on the current engine).
// Input is only ever bound with the driver's client-side `?` binding; optional conditions are
// constant fragments appended in code, never built from input. Times are bound as epoch seconds.
//
// Deduplication: funnel_events is read with FINAL, filtered there only on columns that never
// change between an event's versions (workspace, source, name, time); conditions on the
// acquisition, which a later version may change, are applied outside the FINAL subquery.
// browser_events rows of one event are identical but for received_at, so LIMIT 1 BY is enough.
// acquisitions is always merged (-Merge, GROUP BY source_id, acquisition_id): its rows are partial
// states per insert and month.

// acquisitionsMerged is the merged first touch of a workspace's acquisitions, as a subquery.
// Aliases differ from the state columns' names so that no expression refers to a merged value
// where it means the state.
const acquisitionsMerged = `SELECT source_id, acquisition_id, minMerge(first_seen) AS first_at, maxMerge(last_seen) AS last_at,
    uniqExactIfMerge(page_views) AS views, argMinMerge(first_tracker_ref) AS tracker_ref,
    argMinMerge(first_utm_source) AS utm_source, argMinMerge(first_utm_medium) AS utm_medium,
    argMinMerge(first_utm_campaign) AS utm_campaign, argMinMerge(first_utm_term) AS utm_term,
    argMinMerge(first_utm_content) AS utm_content, argMinMerge(first_gclid) AS gclid, argMinMerge(first_gbraid) AS gbraid,
    argMinMerge(first_wbraid) AS wbraid, argMinMerge(first_landing_url) AS landing_url, argMinMerge(first_referrer) AS referrer
FROM acquisitions`

// selectFirstTouches reads the first touch of a workspace's acquisitions bound as a list of
// (source_id, acquisition_id) tuples.
const selectFirstTouches = `SELECT source_id, acquisition_id, first_at, last_at, views, tracker_ref, utm_source, utm_medium,
utm_campaign, utm_term, utm_content, gclid, gbraid, wbraid, landing_url, referrer
FROM (` + acquisitionsMerged + `
    WHERE workspace_id = ? AND has(?, app_id) AND (source_id, acquisition_id) IN (?)
    GROUP BY source_id, acquisition_id
)
ORDER BY source_id, acquisition_id`

// Recent browser events: base, optional conditions, then the order and limits.
const (
	recentBrowserBase = `SELECT event_id, source_id, acquisition_id, session_id, name, occurred_at, occurred_ms, url, path, platform_shop
FROM browser_events
WHERE workspace_id = ? AND has(?, app_id) AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)`
	recentBrowserEnd = `
ORDER BY occurred_at DESC, occurred_ms DESC, source_id, event_id
LIMIT 1 BY source_id, event_id
LIMIT ?`
)

// Recent server events (with their resolved acquisition): base (inside FINAL), optional
// conditions, the outer part, an optional acquisition condition, then the order and limit.
const (
	recentServerBase = `SELECT event_id, source_id, event_name, occurred_at, occurred_ms, acquisition_source_id, acquisition_id,
    resolved_by, shop_domain, amount_cents, currency
FROM (
    SELECT event_id, source_id, toString(name) AS event_name, occurred_at, occurred_ms, acquisition_source_id, acquisition_id,
        toString(acquisition_resolved_by) AS resolved_by, shop_domain, amount_cents, currency
    FROM funnel_events FINAL
    WHERE workspace_id = ? AND has(?, app_id) AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)`
	recentServerOuter = `
)
WHERE 1`
	recentServerEnd = `
ORDER BY occurred_at DESC, occurred_ms DESC, source_id, event_id
LIMIT ?`
)

// Optional conditions of the recent-events queries.
const (
	andSourceID      = ` AND source_id = ?`
	andAcquisitionID = ` AND acquisition_id = ?`
)

// Troubleshooting of one source since a time of receipt.
const (
	troubleshootBrowser = `SELECT uniqExactIf(event_id, name = 'page_view'), maxIf(received_at, name = 'page_view'),
    uniqExactIf(event_id, first_gclid != '' OR first_gbraid != '' OR first_wbraid != ''),
    uniqExactIf(acquisition_id, first_gclid != '' OR first_gbraid != '' OR first_wbraid != '')
FROM browser_events
WHERE workspace_id = ? AND has(?, app_id) AND source_id = ? AND received_at >= toDateTime(?)`

	troubleshootServer = `SELECT uniqExact(event_id), max(received_at), uniqExactIf(event_id, name = 'identified')
FROM server_events
WHERE workspace_id = ? AND has(?, app_id) AND source_id = ? AND received_at >= toDateTime(?)`

	// troubleshootClickAttributed counts the source's lifecycle events (by occurrence, the only time
	// funnel_events has) whose resolved acquisition captured a click ID.
	troubleshootClickAttributed = `SELECT uniqExact(event_id)
FROM (
    SELECT event_id, acquisition_source_id AS source_id, acquisition_id
    FROM (
        SELECT event_id, acquisition_source_id, acquisition_id
        FROM funnel_events FINAL
        WHERE workspace_id = ? AND has(?, app_id) AND source_id = ? AND occurred_at >= toDateTime(?)
    )
    WHERE acquisition_id != ''
) AS attributed ANY INNER JOIN (
    SELECT source_id, acquisition_id
    FROM (` + acquisitionsMerged + `
        WHERE workspace_id = ? AND has(?, app_id)
        GROUP BY source_id, acquisition_id
    )
    WHERE gclid != '' OR gbraid != '' OR wbraid != ''
) AS clicked USING (source_id, acquisition_id)`
)

// The funnel (rule in funnel.go). Per acquisition of the cohort, its eligible server events are
// arrays of times (epoch ms), names and "resolved by shop link" flags; each step is the earliest
// event of its name at or after the previous step. The cohort part selects the group column
// (one of funnelGroupColumns, never input) between funnelStart and funnelCohortRest.
// 18.16 does not pass on a subquery's column that is only captured by lambdas, so the first-seen
// time reaches the lambdas as an array argument (fss) rather than by capture; same-level aliases
// (t1..t3) capture fine. Joined subqueries carry aliases: current ClickHouse requires them.
const (
	funnelStart = `SELECT grp, count() AS reached_page_view, countIf(r1), countIf(r2), countIf(r3), countIf(r4), countIf(q)
FROM (
    SELECT grp,
        arrayResize(emptyArrayUInt64(), length(ts), fs) AS fss,
        arrayFilter((t, l, f) -> t < f + ? AND (l = 0 OR t >= f), ts, rl, fss) AS et,
        arrayFilter((s, t, l, f) -> t < f + ? AND (l = 0 OR t >= f), st, ts, rl, fss) AS es,
        has(es, 'install') AS r1,
        if(r1, arrayReduce('min', arrayFilter((t, s) -> s = 'install', et, es)), 0) AS t1,
        r1 AND arrayExists((t, s) -> s = 'trial_started' AND t >= t1, et, es) AS r2,
        if(r2, arrayReduce('min', arrayFilter((t, s) -> s = 'trial_started' AND t >= t1, et, es)), 0) AS t2,
        r2 AND arrayExists((t, s) -> s = 'trial_converted' AND t >= t2, et, es) AS r3,
        if(r3, arrayReduce('min', arrayFilter((t, s) -> s = 'trial_converted' AND t >= t2, et, es)), 0) AS t3,
        r3 AND arrayExists((t, s) -> s = 'paid' AND t >= t3, et, es) AS r4,
        has(es, 'qualified') AS q
    FROM (
        SELECT grp, fs, ts, st, rl
        FROM (
        SELECT `
	funnelCohortRest = ` AS grp, source_id, acquisition_id, toUInt64(first_at) * 1000 AS fs
        FROM (` + acquisitionsMerged + `
            WHERE workspace_id = ? AND has(?, app_id)`
	funnelCohortEnd = `
            GROUP BY source_id, acquisition_id
        )
        WHERE views > 0 AND first_at >= toDateTime(?) AND first_at < toDateTime(?)
    ) AS cohort ANY LEFT JOIN (
        SELECT acquisition_source_id AS source_id, acquisition_id,
            groupArray(toUInt64(occurred_at) * 1000 + occurred_ms) AS ts, groupArray(event_name) AS st, groupArray(by_link) AS rl
        FROM (
            SELECT acquisition_source_id, acquisition_id, occurred_at, occurred_ms, toString(name) AS event_name,
                toUInt8(acquisition_resolved_by = 'shop_link') AS by_link
            FROM funnel_events FINAL
            WHERE workspace_id = ? AND has(?, app_id) AND name IN ('install', 'trial_started', 'trial_converted', 'paid', 'qualified')
                AND occurred_at < toDateTime(?)
        )
        WHERE acquisition_id != ''
        GROUP BY acquisition_source_id, acquisition_id
    ) AS journeys USING (source_id, acquisition_id)
    )
)
GROUP BY grp
ORDER BY grp`
)

// funnelGroupColumns maps a dimension to its expression over the merged acquisitions; the click-ID
// type and the landing path are computed as attribution computes them (query/reporting).
var funnelGroupColumns = map[string]string{
	DimensionSource:      "source_id",
	DimensionTrackerRef:  "tracker_ref",
	DimensionUTMCampaign: "utm_campaign",
	DimensionUTMSource:   "utm_source",
	DimensionUTMMedium:   "utm_medium",
	DimensionClickIDType: "multiIf(gclid != '', 'gclid', gbraid != '', 'gbraid', wbraid != '', 'wbraid', 'none')",
	DimensionLandingPath: "if(landing_url = '', '', if(path(landing_url) = '', '/', path(landing_url)))",
}

// selectLedger sums commissionable events per first-touch tracker_ref and currency. Events without
// a resolved acquisition, or whose acquisition has no browser history, join nothing and fall under
// the empty tracker_ref ("(none)"). Money is never summed across currencies.
const selectLedger = `SELECT tracker_ref, currency, sumIf(cents, event_name = 'paid'), sumIf(cents, event_name = 'refunded'),
    countIf(event_name = 'paid'), countIf(event_name = 'refunded')
FROM (
    SELECT acquisition_source_id AS source_id, acquisition_id, toString(name) AS event_name,
        ifNull(amount_cents, 0) AS cents, currency
    FROM funnel_events FINAL
    WHERE workspace_id = ? AND has(?, app_id) AND name IN ('paid', 'refunded') AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)
) AS money ANY LEFT JOIN (
    SELECT source_id, acquisition_id, tracker_ref
    FROM (` + acquisitionsMerged + `
        WHERE workspace_id = ? AND has(?, app_id)
        GROUP BY source_id, acquisition_id
    )
) AS touches USING (source_id, acquisition_id)
GROUP BY tracker_ref, currency
ORDER BY tracker_ref, currency`

// More optional conditions of the recent-events queries: the event's name (toString: a server
// event's name is an Enum, which refuses a comparison with an unknown name instead of matching
// nothing) and the shop (a browser event's embedded-app shop, a server event's customerRef, the
// latter matched outside FINAL with the acquisition).
const (
	andName         = ` AND toString(name) = ?`
	andPlatformShop = ` AND platform_shop = ?`
	andShopDomain   = ` AND shop_domain = ?`
)

// The cursor of the recent-events listing (cursor.go): events strictly after the cursor's event in
// the listing's order (time descending, then browser before server, then source and event ID).
// The first condition lets ClickHouse skip by the sorting key's time; the exact one follows.
// afterSameEvidence is for the query of the cursor event's own evidence (same instant: a greater
// source, or the same source and a greater event ID); afterOtherEvidence for the other query, whose
// same-instant events all come after (the server query after a browser cursor) or all before (the
// browser query after a server cursor: before strictly).
const (
	afterCoarse        = ` AND occurred_at <= toDateTime(?)`
	afterSameEvidence  = ` AND (toUInt64(occurred_at) * 1000 + occurred_ms < ? OR (toUInt64(occurred_at) * 1000 + occurred_ms = ? AND (source_id > ? OR (source_id = ? AND event_id > ?))))`
	afterBrowserCursor = ` AND toUInt64(occurred_at) * 1000 + occurred_ms <= ?`
	afterServerCursor  = ` AND toUInt64(occurred_at) * 1000 + occurred_ms < ?`
)
