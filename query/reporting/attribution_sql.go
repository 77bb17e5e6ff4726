package reporting

// Queries of attribution by acquisition channel (attribution.go, docs/METRICS.md 10). They follow the
// rules of sql.go (ClickHouse 18.16 and current, `?` binding only, instants as epoch seconds) and
// those of the tracking reads (query/tracking/sql.go): acquisition_touches is always reduced per
// acquisition (its rows of one acquisition and month collapse only as they merge), shop_attribution
// is merged (FINAL, per app and shop), and funnel_events is read with FINAL, filtered inside only on
// columns that never change between an event's versions (workspace, app, name, time, shop domain).
// The first touch is joined when read, never copied to the shop or the customer, so browser history
// that lands late still attributes (docs/ARCHITECTURE.md).
//
// Each query reads one table and reduces it (per customer, shop, acquisition); the joins are done in
// Go by fixed-size keys computed here (pairKeySQL), which on ClickHouse 18.16 costs a fraction of
// joining there. The channel value is computed in ClickHouse by one of attributionGroups (a
// constant chosen by the groupBy parameter, never input).

// pairKeySQL is two strings hashed to 128 bits, length-prefixed so that no two pairs share an input.
// Migration 0025 stores it of (source_id, acquisition_id) as acquisition_touches.acquisition_key,
// and the readers compute it of a shop's first link and of a funnel event's acquisition, so Go joins
// fixed-size keys rather than strings. A shop is keyed the same way by (app_id, shop domain).
func pairKeySQL(a, b string) string {
	return "sipHash128(concat(toString(length(" + a + ")), ':', " + a + ", " + b + "))"
}

// acquisitionKeySQL is the key of acquisition_touches (migration 0025, whose view writes exactly this).
var acquisitionKeySQL = pairKeySQL("source_id", "acquisition_id")

// The first touches (acquisition_touches, migration 0025: the earliest event's values per
// acquisition and month, plain columns). An acquisition's touch is, over its rows of every month,
// the row of greatest version (the earliest event; rows of one month collapse into it as they merge)
// with the smallest first_at, which is what acquisitions' -Merge gives. The group's expression (one
// of attributionGroups, evaluated on each row) goes between head and tail, as grp.
//
// Most browsers never become a customer, so the touches are read only for the acquisitions the
// response needs, matched alone in PREWHERE so that no other row is read: the linked acquisitions
// (every link, of which each shop's first is one: a plain read, where the first links cost a merge
// of shop_attribution's states) and the acquisitions of the range's funnel events (any version),
// whose touches Go looks up; and
// (attributionSeenHead) those with an event in the month of the range's start or later (one first
// seen in the range has none before), counted per channel here. Arguments workspace, apps (links),
// workspace, apps, from, to (events), workspace, apps.
var (
	attributionTouchesHead = `SELECT acquisition_key, toUInt32(min(first_at)), argMax(`
	// the group's expression, then:
	attributionTouchesTail = `, version) AS grp
FROM acquisition_touches
PREWHERE acquisition_key IN (
        SELECT ` + pairKeySQL("source_id", "acquisition_id") + ` FROM acquisition_links WHERE workspace_id = ? AND app_id IN ?
        UNION ALL
        SELECT ` + pairKeySQL("acquisition_source_id", "acquisition_id") + ` FROM funnel_events
        WHERE workspace_id = ? AND app_id IN ? AND name IN ('install', 'trial_started', 'trial_converted')
            AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?))
WHERE workspace_id = ? AND app_id IN ?
GROUP BY acquisition_key`

	// attributionSeenHead counts per channel the acquisitions first seen in [from, to): of those with
	// a row first seen in the range, the ones whose earliest row is. Rows first seen at or after `to`
	// can be neither, so only earlier rows are grouped. Arguments workspace, apps, the range's first
	// month, from, to, workspace, apps, to, from.
	attributionSeenHead = `SELECT grp, count()
FROM (
    SELECT argMax(`
	// the group's expression, then:
	attributionSeenTail = `, version) AS grp, min(first_at) AS first
    FROM acquisition_touches
    PREWHERE acquisition_key IN (
        SELECT acquisition_key FROM acquisition_touches
        WHERE workspace_id = ? AND app_id IN ? AND event_month >= toDate(?) AND first_at >= toDateTime(?) AND first_at < toDateTime(?))
    WHERE workspace_id = ? AND app_id IN ? AND first_at < toDateTime(?)
    GROUP BY acquisition_key
    HAVING first >= toDateTime(?)
)
GROUP BY grp`
)

// selectTrackingSince is per covered app the earliest stored browser event of its tracking sources
// (epoch seconds). An acquisition's row of a month holds its events of that month, so the earliest
// event is in the app's earliest month. Arguments workspace, apps, workspace, apps.
const selectTrackingSince = `SELECT app_id, toUInt32(min(first_at))
FROM acquisition_touches
WHERE workspace_id = ? AND app_id IN ? AND (app_id, event_month) IN (
    SELECT app_id, min(event_month) FROM acquisition_touches WHERE workspace_id = ? AND app_id IN ? GROUP BY app_id)
GROUP BY app_id`

// attributionGroups maps a groupBy value to the expression of a touch's row that computes it (grp).
// The click-ID type takes the first non-empty of gclid, gbraid, wbraid (a browser carries one of
// them; Google sends gbraid and wbraid only where gclid cannot be used); the landing path is the
// path of the first landing URL without query or fragment, "/" for a URL without a path, "" without
// a URL.
var attributionGroups = map[string]string{
	GroupUTMSource:   `utm_source`,
	GroupUTMMedium:   `utm_medium`,
	GroupUTMCampaign: `utm_campaign`,
	GroupTrackerRef:  `tracker_ref`,
	GroupClickIDType: `multiIf(gclid != '', 'gclid', gbraid != '', 'gbraid', wbraid != '', 'wbraid', 'none')`,
	GroupLandingPath: `if(landing_url = '', '', if(path(landing_url) = '', '/', path(landing_url)))`,
}

// selectAttributionCustomers is one row per customer of the covered apps (latest version): its key,
// app (its 1-based index in the bound list of the scope's apps: no string per customer), shop key
// (pairKeySQL of the app and the shop domain in lower case, as the identity join writes it) and
// first install (epoch seconds, 0 = unknown). Arguments the apps as an array, workspace, apps.
var selectAttributionCustomers = `SELECT ` + customerKeySQL + `, toUInt8(indexOf(?, app_id)), ` + pairKeySQL("app_id", "lower(shop_domain)") + `,
    ifNull(toUInt32(first_installed_at), 0)
FROM reporting_customers FINAL
WHERE workspace_id = ? AND app_id IN ?`

// selectShopLinks is each shop's first link per covered app (shop_attribution: the first acquisition
// a tracking source of that app linked to the shop), as the shop's key and the acquisition's. FINAL
// merges each shop's states in key order, where GROUP BY hashed the two strings (half the CPU on
// 18.16). Arguments workspace, apps.
var selectShopLinks = `SELECT ` + pairKeySQL("app_id", "shop_domain") + `, ` + pairKeySQL("tupleElement(link, 1)", "tupleElement(link, 2)") + `
FROM (
    SELECT app_id, shop_domain, finalizeAggregation(first_link) AS link
    FROM shop_attribution FINAL
    WHERE workspace_id = ? AND app_id IN ?
)`

// selectAttributionFunnel counts the verified install, trial_started and trial_converted events
// (funnel_events, one row per event) that occurred in [from, to), per acquisition each is
// attributed to (its own acquisitionId, else its shop's first link; ” for none). Events naming a
// shop the workspace excludes in their app are left out (METRICS 1.3). Arguments workspace, apps,
// from, to, workspace (the exclusions, twice). Each acquisition comes as its key (pairKeySQL), with
// a flag saying whether there is one.
var selectAttributionFunnel = `SELECT acquisition_id != '', ` + pairKeySQL("acquisition_source_id", "acquisition_id") + `, countIf(event_name = 'install'),
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
// the customer's public ID's ten bytes (customerKeySQL), also what the rows are grouped by: a
// fixed-size key groups for less CPU than the ID's string on 18.16. Arguments: from, from,
// asOf − 29 days, workspace, apps, window start, to (days since the epoch).
const selectCustomerRevenue = `SELECT ` + customerKeySQL + ` AS key, currency, sumIf(transactions, day >= ?) AS in_range,
    sumIf(net_cents, day >= ?) AS net, sum(usage_sales) AS usage_sales, sumIf(usage_gross_cents, day >= ?) AS trailing_gross
FROM reporting_customer_days FINAL
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?
GROUP BY key, currency`
