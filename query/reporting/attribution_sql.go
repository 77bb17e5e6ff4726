package reporting

// Queries of attribution by acquisition channel (attribution.go, docs/METRICS.md 10). They follow the
// rules of sql.go (ClickHouse 18.16 and current, `?` binding only, instants as epoch seconds) and
// those of the tracking reads (query/tracking/sql.go): acquisitions is always merged (-Merge, GROUP
// BY source_id, acquisition_id), shop_attribution too (argMinMerge per app and shop), and
// funnel_events is read with FINAL, filtered inside only on columns that never change between an
// event's versions (workspace, app, name, time, shop domain). The first touch is joined when read,
// never copied, so browser history that lands late still attributes (docs/ARCHITECTURE.md).
//
// Each query reads one table and reduces it (per customer, shop, acquisition); the joins are done in
// Go by key (attribution_facts.go), which on ClickHouse 18.16 costs a fraction of joining merged
// aggregate states there. The channel value is computed in ClickHouse by one of attributionGroups (a
// constant chosen by the groupBy parameter, never input).

// The first touches, merged (-Merge over the months of each acquisition) with only the states the
// group needs (18.16 merges every state a subquery names, read or not): the group's columns (one of
// attributionGroups, which names the value grp) go between head and middle. Most browsers never
// become a customer, so the touches are read only for the acquisitions the response needs: the
// shops' first links, the acquisitions of the range's funnel events (any version), and those with an
// event in the month of the range's start or later (one first seen in the range has none before),
// whose first-seen instants Go counts per channel. One pass merges them all: the states are the
// costly part of the read, and two passes (the touches, then the counts) merged most of them twice.
// The IDs are matched alone, in PREWHERE, so that the states of the other acquisitions are never
// read: a superset when two sources share an ID, whose exact pair Go matches.
const (
	attributionTouchesHead = `SELECT app_id, source_id, acquisition_id, toUInt32(first_at) AS first_seen_at, grp
FROM (
    SELECT app_id, source_id, acquisition_id, minMerge(first_seen) AS first_at, `
	// the group's columns, then:
	attributionTouchesMiddle = `
    FROM acquisitions`
	// touchesNeeded selects the acquisitions above. Arguments workspace, apps (links), workspace,
	// apps, from, to (events), workspace, apps, the range's first month (seen since), workspace, apps.
	touchesNeeded = `
    PREWHERE acquisition_id IN (
            SELECT tupleElement(link, 2)
            FROM (SELECT argMinMerge(first_link) AS link FROM shop_attribution WHERE workspace_id = ? AND app_id IN ? GROUP BY app_id, shop_domain)
            UNION ALL
            SELECT acquisition_id FROM funnel_events
            WHERE workspace_id = ? AND app_id IN ? AND name IN ('install', 'trial_started', 'trial_converted')
                AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)
            UNION ALL
            SELECT acquisition_id FROM acquisitions WHERE workspace_id = ? AND app_id IN ? AND event_month >= toDate(?))
    WHERE workspace_id = ? AND app_id IN ?
    GROUP BY app_id, source_id, acquisition_id
)`
)

// selectTrackingSince is per covered app the earliest stored browser event of its tracking sources
// (epoch seconds). An acquisition's row of a month holds its events of that month, so the earliest
// event is in the app's earliest month, and only that month's first-seen states are merged.
// Arguments workspace, apps, workspace, apps.
const selectTrackingSince = `SELECT app_id, toUInt32(minMerge(first_seen))
FROM acquisitions
WHERE workspace_id = ? AND app_id IN ? AND (app_id, event_month) IN (
    SELECT app_id, min(event_month) FROM acquisitions WHERE workspace_id = ? AND app_id IN ? GROUP BY app_id)
GROUP BY app_id`

// attributionGroups maps a groupBy value to the merged first-touch columns that compute it (grp).
// The click-ID type takes the first non-empty of gclid, gbraid, wbraid (a browser carries one of
// them; Google sends gbraid and wbraid only where gclid cannot be used); the landing path is the
// path of the first landing URL without query or fragment, "/" for a URL without a path, "" without
// a URL.
var attributionGroups = map[string]string{
	GroupUTMSource:   `argMinMerge(first_utm_source) AS grp`,
	GroupUTMMedium:   `argMinMerge(first_utm_medium) AS grp`,
	GroupUTMCampaign: `argMinMerge(first_utm_campaign) AS grp`,
	GroupTrackerRef:  `argMinMerge(first_tracker_ref) AS grp`,
	GroupClickIDType: `argMinMerge(first_gclid) AS gclid, argMinMerge(first_gbraid) AS gbraid, argMinMerge(first_wbraid) AS wbraid,
        multiIf(gclid != '', 'gclid', gbraid != '', 'gbraid', wbraid != '', 'wbraid', 'none') AS grp`,
	GroupLandingPath: `argMinMerge(first_landing_url) AS landing_url,
        if(landing_url = '', '', if(path(landing_url) = '', '/', path(landing_url))) AS grp`,
}

// selectAttributionCustomers is one row per customer of the covered apps (latest version): its key,
// app, shop domain in lower case (as the identity join writes it) and first install (epoch seconds,
// 0 = unknown). Arguments workspace, apps.
const selectAttributionCustomers = `SELECT ` + customerKeySQL + `, app_id, lower(shop_domain), ifNull(toUInt32(first_installed_at), 0)
FROM reporting_customers FINAL
WHERE workspace_id = ? AND app_id IN ?`

// selectShopLinks is each shop's first link per covered app (shop_attribution: the first acquisition
// a tracking source of that app linked to the shop). Arguments workspace, apps.
const selectShopLinks = `SELECT app_id, shop_domain, tupleElement(link, 1), tupleElement(link, 2)
FROM (
    SELECT app_id, shop_domain, argMinMerge(first_link) AS link
    FROM shop_attribution
    WHERE workspace_id = ? AND app_id IN ?
    GROUP BY app_id, shop_domain
)`

// selectAttributionFunnel counts the verified install, trial_started and trial_converted events
// (funnel_events, one row per event) that occurred in [from, to), per acquisition each is
// attributed to (its own acquisitionId, else its shop's first link; ” for none). Events naming a
// shop the workspace excludes in their app are left out (METRICS 1.3). Arguments workspace, apps,
// from, to, workspace (the exclusions, twice).
const selectAttributionFunnel = `SELECT acquisition_source_id, acquisition_id, countIf(event_name = 'install'),
    countIf(event_name = 'trial_started'), countIf(event_name = 'trial_converted')
FROM (
    SELECT acquisition_source_id, acquisition_id, toString(name) AS event_name, shop_domain, app_id
    FROM funnel_events FINAL
    WHERE workspace_id = ? AND app_id IN ? AND name IN ('install', 'trial_started', 'trial_converted')
        AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)
)
WHERE NOT (` + isExcludedSQL + `)
GROUP BY acquisition_source_id, acquisition_id`

// selectCustomerRevenue is each customer's transactions per currency that attribution adds to its
// row (METRICS 10.3): the net revenue, Σ net_cents of its transactions of every type created in
// [from, to), with how many there are; and its usage MRR on asOf, Σ gross_cents of its usage sales in
// the 30 days ending on asOf (METRICS 3.2, the summary's usage facts), with how many usage sales it
// has in the whole window read, [min(from, asOf − 29 days), to). Every bound is a day's start, so
// the customer days (migration 0024: each customer's transactions per day and currency,
// de-duplicated when they landed) hold these sums without a read of every transaction. The key is
// the customer's public ID's ten bytes (customerKeySQL). Arguments: from, from, asOf − 29 days,
// workspace, apps, window start, to (days since the epoch).
const selectCustomerRevenue = `SELECT ` + customerKeySQL + ` AS key, currency, in_range, net, usage_sales, trailing_gross
FROM (
    SELECT public_id, currency, sumIf(transactions, day >= ?) AS in_range, sumIf(net_cents, day >= ?) AS net,
        sum(usage_sales) AS usage_sales, sumIf(usage_gross_cents, day >= ?) AS trailing_gross
    FROM reporting_customer_days FINAL
    WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?
    GROUP BY public_id, currency
)`
