package reporting

// Queries of the timeline engine (timeline.go): the facts that decide every customer's billing on
// any date up to the last point, read once per request whatever the number of points. The rules of
// sql.go hold (ClickHouse 18.16 and current; `?` binding; instants as epoch seconds;
// timeline_compat_test.go runs each on the current engine).

// The timeline engine reads every non-test subscription charge of the covered apps with
// selectChargeFacts (sql.go): all of its state events and its customer's uninstalls, so that its
// state on any date is a search in the arrays (METRICS 2.1), and its payments, of which Go keeps
// those that can be evidence on a point (METRICS 2.3): created in [from, end of the last point),
// from the first point's end − 45 days, − 395 days for an annual charge. Test charges are never
// paying and never in a lineage (METRICS 1.3, 2.3), so they have no row. The charges retired before
// the first point's end (the facts' retired day, in the sorting key) are left out before FINAL: on
// no point can one be in effect or be evidence (charge_text.go, summaryCandidate). Rows with
// states_derived = 0 carry no arrays; their events are read by selectTimelineFallback.

// selectTimelineFallback is, for the customers with a charge row written without its states, every
// state event per charge and (charge ”) every uninstall of the customer, as event keys. A
// duplicate event repeats a key, which changes no state. Arguments: workspace, apps, workspace, apps.
const selectTimelineFallback = `SELECT ` + customerKeySQL + ` AS key, charge, groupArray(k)
FROM (
    SELECT public_id, if(kind = 8, '', charge_id) AS charge, toUInt64(occurred_at) * 16 + kind AS k
    FROM (
        SELECT public_id, charge_id, occurred_at, ` + chargeEventKindSQL + ` AS kind
        FROM reporting_events
        WHERE workspace_id = ? AND app_id IN ?
            AND type IN ('SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED', 'SUBSCRIPTION_CHARGE_UNFROZEN',
                'SUBSCRIPTION_CHARGE_FROZEN', 'SUBSCRIPTION_CHARGE_CANCELED', 'SUBSCRIPTION_CHARGE_DECLINED',
                'SUBSCRIPTION_CHARGE_EXPIRED', 'RELATIONSHIP_UNINSTALLED')
            AND public_id IN (
                SELECT public_id FROM reporting_charges
                WHERE workspace_id = ? AND app_id IN ? AND kind = 'subscription' AND test = 0 AND states_derived = 0)
    )
)
GROUP BY public_id, charge`

// selectTimelineUsage is each customer's usage sales per currency and UTC day (days since the
// epoch) in [from, to), gross, net and count: the trailing 30-day windows of usage MRR (METRICS 3.2)
// at every point and the billed usage of every interval (3.10) are sums of these. They are read
// from the customer days (migration 0024), de-duplicated when they landed: one row per customer,
// day and currency instead of every sale, FINAL only over the day rows' versions. They are read
// from the usage days (migration 0028), the customer days that hold a usage sale: a year of days
// with transactions but no usage sale is two thirds of the rows FINAL would merge, and a read of the
// sales finds none on them. Arguments: workspace, apps, first day, day after the last (days since
// the epoch).
const selectTimelineUsage = `SELECT ` + customerKeySQL + ` AS key, currency, day, sum(usage_gross_cents), sum(usage_net_cents), sum(usage_sales) AS sales
FROM reporting_usage_days FINAL
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?
GROUP BY public_id, currency, day
HAVING sales > 0`

// selectTimelineUsageTotals is selectTimelineUsage per currency and day for the customers in scope:
// head, scope condition (on public_id), tail. A series that shows no customer's usage (every metric
// but concentration) sums the same rows per currency, so ClickHouse sums them instead of sending
// one row per customer and day. Arguments: workspace, apps, first day, day after the last.
const (
	selectTimelineUsageTotals = `SELECT currency, day, sum(usage_gross_cents), sum(usage_net_cents), sum(usage_sales) AS sales
FROM reporting_usage_days FINAL
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?`
	timelineUsageTotalsTail = `
GROUP BY currency, day
HAVING sales > 0`
)

// selectFirstPayments is each customer's first positive subscription payment per currency before
// an instant: whether a customer who starts paying in a period had paid before in that currency
// (reactivation) or not (new) (METRICS 3.14), and the cohorts by first payment. Every sale counts,
// of whatever charge (a test charge's, one without a row), so it is not read from the charge facts.
// A duplicate changes no minimum. Grouped by the fixed-size key rather than the public ID's
// string (15 % less CPU on 18.16). Arguments: workspace, apps, the end of the last point.
const selectFirstPayments = `SELECT ` + customerKeySQL + ` AS key, currency, min(toUInt32(created_at))
FROM reporting_charge_payments
WHERE workspace_id = ? AND app_id IN ? AND created_at < toDateTime(?)
GROUP BY key, currency`

// observedByDayHead is the observed usage charges (METRICS 3.11) per currency and UTC day, for
// every interval of a series: head, observedByDayWhere, scope condition (on public_id),
// observedByDayTail. They are read from the observed usage days (migration 0026: each customer's
// non-test records per day, charge and currency, de-duplicated when they landed), FINAL only over
// the day rows' versions, as the summary reads them (sql.go); a year of them is half as many rows
// as the records and needs no de-duplication of the records. observedCurrenciesByDayHead only
// tells which currencies have one on which day, for the series that do not show their sums: no
// FINAL (a day row's versions share their currency and charge, and each counts a record), and
// optionally (observedOtherCurrencies, argument: the currencies) only for the currencies the rest
// of the series did not give a block on every interval, in PREWHERE, so that the other rows are
// skipped after reading their currency alone. A day whose charge is a test charge is left out when
// read (the charge's test flag can land after the records); the test charges are few, so the
// condition is a set lookup per row. Arguments of observedByDayWhere: workspace, apps, first day,
// day after the last, workspace, apps.
const (
	observedByDayHead = `SELECT currency, day, sum(amount_cents), sum(records)
FROM reporting_observed_days_fine FINAL`
	observedCurrenciesByDayHead = `SELECT currency, day, toInt64(0), sum(records)
FROM reporting_observed_days_fine`
	observedOtherCurrencies = `
PREWHERE currency NOT IN ?`
	observedByDayWhere = `
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?
    AND (app_id, charge_id) NOT IN (SELECT app_id, charge_id FROM reporting_charges WHERE workspace_id = ? AND app_id IN ? AND test = 1)`
	observedByDayTail = `
GROUP BY currency, day`
)

// selectCohortInstalls is each customer's first install (platform_customers.first_installed_at, the
// latest version), the date of its install cohort (METRICS 3.15). Arguments: workspace, apps.
const selectCohortInstalls = `SELECT ` + customerKeySQL + ` AS key, ifNull(toUInt32(first_installed_at), 0)
FROM reporting_customers FINAL
WHERE workspace_id = ? AND app_id IN ?`
