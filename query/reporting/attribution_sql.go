package reporting

// Queries of attribution by acquisition channel (attribution.go, docs/METRICS.md 10). They follow the
// rules of sql.go (ClickHouse 18.16 and current, `?` binding only, instants as epoch seconds) and
// those of the tracking reads (query/tracking/sql.go): acquisitions is always merged (-Merge, GROUP
// BY source_id, acquisition_id), shop_attribution too (argMinMerge per app and shop), and
// funnel_events is read with FINAL, filtered inside only on columns that never change between an
// event's versions (workspace, app, name, time, shop domain). The first touch is joined when read,
// never copied, so browser history that lands late still attributes (docs/ARCHITECTURE.md).
//
// The channel value is computed in ClickHouse by one of attributionGroups (a constant chosen by the
// groupBy parameter, never input), so every query groups by the same expression.

// attributionTouches is the merged first touch of a workspace's acquisitions with the channel value
// (grp) of the group expression placed between it and attributionTouchesRest; arguments workspace,
// apps.
const (
	attributionTouches = `SELECT source_id, acquisition_id, toUInt32(first_at) AS first_at, toUInt8(1) AS touched, `
	// the expression, then:
	attributionTouchesRest = ` AS grp
    FROM (
        SELECT source_id, acquisition_id, minMerge(first_seen) AS first_at, argMinMerge(first_tracker_ref) AS tracker_ref,
            argMinMerge(first_utm_source) AS utm_source, argMinMerge(first_utm_medium) AS utm_medium,
            argMinMerge(first_utm_campaign) AS utm_campaign, argMinMerge(first_gclid) AS gclid, argMinMerge(first_gbraid) AS gbraid,
            argMinMerge(first_wbraid) AS wbraid, argMinMerge(first_landing_url) AS landing_url
        FROM acquisitions
        WHERE workspace_id = ? AND app_id IN ?
        GROUP BY source_id, acquisition_id
    )`
)

// attributionGroups maps a groupBy value to its expression over the merged first touch. The click-ID
// type takes the first non-empty of gclid, gbraid, wbraid (a browser carries one of them; Google
// sends gbraid and wbraid only where gclid cannot be used); the landing path is the path of the
// first landing URL without query or fragment, "/" for a URL without a path, "" without a URL.
var attributionGroups = map[string]string{
	GroupUTMSource:   `utm_source`,
	GroupUTMMedium:   `utm_medium`,
	GroupUTMCampaign: `utm_campaign`,
	GroupTrackerRef:  `tracker_ref`,
	GroupClickIDType: `multiIf(gclid != '', 'gclid', gbraid != '', 'gbraid', wbraid != '', 'wbraid', 'none')`,
	GroupLandingPath: `if(landing_url = '', '', if(path(landing_url) = '', '/', path(landing_url)))`,
}

// selectAttributionCustomers is one row per customer of the covered apps (latest version): its key,
// app, first install (epoch seconds, 0 = unknown), whether its shop has a first link in its own app
// (shop_attribution: the first acquisition linked to the shop by a tracking source of that app),
// and that acquisition's first touch: whether it has browser history, when it was first seen, and
// its channel value. The shop domain is compared in lower case, as the identity join writes it.
// Head (then the group expression), tail; arguments workspace, apps (customers), workspace, apps
// (links), workspace, apps (touches), workspace, apps (the links again, to read only their touches).
const (
	selectAttributionCustomersHead = `SELECT key, app_id, installed, linked, touched, first_at, grp
FROM (
    SELECT ` + customerKeySQL + ` AS key, app_id, lower(shop_domain) AS domain, ifNull(toUInt32(first_installed_at), 0) AS installed
    FROM reporting_customers FINAL
    WHERE workspace_id = ? AND app_id IN ?
) AS customers ANY LEFT JOIN (
    SELECT app_id, domain, toUInt8(1) AS linked, touched, first_at, grp
    FROM (
        SELECT app_id, shop_domain AS domain, tupleElement(link, 1) AS source_id, tupleElement(link, 2) AS acquisition_id
        FROM (
            SELECT app_id, shop_domain, argMinMerge(first_link) AS link
            FROM shop_attribution
            WHERE workspace_id = ? AND app_id IN ?
            GROUP BY app_id, shop_domain
        )
    ) AS links ANY LEFT JOIN (
        ` + attributionTouches
	// the group expression, then:
	selectAttributionCustomersTail = attributionTouchesRest + `
        WHERE (source_id, acquisition_id) IN (
            SELECT tupleElement(link, 1), tupleElement(link, 2)
            FROM (SELECT argMinMerge(first_link) AS link FROM shop_attribution WHERE workspace_id = ? AND app_id IN ? GROUP BY app_id, shop_domain)
        )
    ) AS touches USING (source_id, acquisition_id)
) AS attributed USING (app_id, domain)`
)

// selectAttributionFunnel counts the verified install, trial_started and trial_converted events
// (funnel_events, one row per event) that occurred in [from, to), per channel of the acquisition
// each is attributed to (its own acquisitionId, else its shop's first link): resolved = 0 for the
// events attributed to none, touched = 0 for those whose acquisition has no stored browser
// history. Events naming a shop the workspace excludes in their app are left out (METRICS 1.3).
// Head (then the group expression), tail; arguments workspace, apps, from, to, workspace (the
// exclusions, twice), then workspace, apps (touches).
const (
	selectAttributionFunnelHead = `SELECT resolved, touched, grp, countIf(event_name = 'install'), countIf(event_name = 'trial_started'),
    countIf(event_name = 'trial_converted')
FROM (
    SELECT acquisition_source_id AS source_id, acquisition_id, event_name, toUInt8(acquisition_id != '') AS resolved
    FROM (
        SELECT acquisition_source_id, acquisition_id, toString(name) AS event_name, shop_domain, app_id
        FROM funnel_events FINAL
        WHERE workspace_id = ? AND app_id IN ? AND name IN ('install', 'trial_started', 'trial_converted')
            AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)
    )
    WHERE NOT (` + isExcludedSQL + `)
) AS events ANY LEFT JOIN (
    ` + attributionTouches
	// the group expression, then:
	selectAttributionFunnelTail = attributionTouchesRest + `
) AS touches USING (source_id, acquisition_id)
GROUP BY resolved, touched, grp`
)

// selectAttributionAcquisitions counts the acquisitions (browsers of the covered apps' sources)
// first seen in [from, to), per channel of their own first touch. Head (then the group
// expression), tail; arguments workspace, apps, from, to.
const (
	selectAttributionAcquisitionsHead = `SELECT grp, count()
FROM (
    ` + attributionTouches
	// the group expression, then:
	selectAttributionAcquisitionsTail = attributionTouchesRest + `
)
WHERE first_at >= ? AND first_at < ?
GROUP BY grp`
)

// selectTrackingSince is per covered app the earliest stored browser event of its tracking sources
// (epoch seconds). Arguments workspace, apps.
const selectTrackingSince = `SELECT app_id, toUInt32(minMerge(first_seen))
FROM acquisitions
WHERE workspace_id = ? AND app_id IN ?
GROUP BY app_id`

// selectNetRevenue is each customer's net revenue per currency: Σ net_cents of its transactions of
// every type created in [from, to) (METRICS 10.3), FINAL over the range's monthly partitions. The key
// is the customer's public ID's ten bytes (customerKeySQL), computed as schemas.CustomerPublicID
// does. Arguments workspace, apps, from, to.
const selectNetRevenue = `SELECT toFixedString(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10), 10) AS key, currency, net
FROM (
    SELECT app_id, customer_id, currency, sum(net_cents) AS net
    FROM platform_transactions FINAL
    WHERE workspace_id = ? AND app_id IN ? AND created_at >= toDateTime(?) AND created_at < toDateTime(?)
    GROUP BY app_id, customer_id, currency
)`
