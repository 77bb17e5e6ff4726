package reporting

// Queries of the reporting store. They run on ClickHouse 18.16 and on current ClickHouse (no window
// functions, CTE subqueries, DateTime64 or JSONExtract; compat_test.go runs every one, in every
// composition, on the current engine). Input is only ever bound with the driver's client-side `?`
// binding; optional conditions are constant fragments appended in code. Instants are bound as epoch
// seconds and read back as UInt32 epoch seconds (0 = none), which also keeps Nullable columns out of
// aggregate functions.
//
// Where the rows come from (migration 0011, docs/REPORTING_PERFORMANCE.md): customers, charges,
// events, transactions and usage are read from the reporting_* copies, ordered by (workspace, app,
// public customer ID), so that a page of customers or one customer is a few key ranges; the summary
// reads compact facts (a charge row carries its state events; positive subscription sales; usage
// sales) and the platform tables partitioned by month where it sums a range (observed usage
// charges, usage events). A customer is named by its public ID; the summary reads it as the ten
// bytes behind it (customerKeySQL), which Go keys maps by without allocating.
//
// De-duplication (every table is a replacing table; a duplicate must never count twice):
//   - customers and charges are read with FINAL;
//   - sums are read with FINAL on tables partitioned by month, restricted by the partition key to
//     the dates they add up;
//   - maxima and minima (the latest payment, a customer's last usage event) read the rows as they
//     are: a duplicate changes neither;
//   - one customer's rows (the list and the detail) are read by key range and collapsed with
//     LIMIT 1 BY their ID, or FINAL over that range.
//
// Under FINAL, conditions are only on columns that never change between a row's versions (IDs,
// workspace, app, customer, kind, type, test flags, the row's date), because 18.16 may apply them
// before the versions are merged; conditions on the others go in an outer query.

// customerKeySQL is the customer's public ID as its ten hash bytes (schemas.CustomerPublicID is
// "cus_" and their hex): exact, and scanned into a customerHash without an allocation.
const customerKeySQL = `toFixedString(unhex(substring(public_id, 5)), 10)`

// excludedPairs are the (shop_domain, app_id) keys a workspace currently excludes (an empty app_id
// means every app): the latest customer_exclusions row per key decides.
const excludedPairs = `SELECT shop_domain, app_id FROM (
        SELECT shop_domain, app_id, argMax(excluded, version) AS is_excluded
        FROM customer_exclusions WHERE workspace_id = ? GROUP BY shop_domain, app_id
    ) WHERE is_excluded = 1`

// selectExclusionCount counts the workspace's exclusions in force.
const selectExclusionCount = `SELECT count() FROM (` + excludedPairs + `)`

// isExcludedSQL says whether a customer row's domain is excluded in its app or in every app.
// customer_exclusions is whole on every node of a cluster, not Distributed (schemas/cluster_keys.go),
// so every subquery on it is GLOBAL: a shard would otherwise look the table up in its own default
// database. On one node GLOBAL IN is IN.
const isExcludedSQL = `(shop_domain, app_id) GLOBAL IN (` + excludedPairs + `) OR (shop_domain, '') GLOBAL IN (` + excludedPairs + `)`

// selectExcludedCustomers lists the excluded customers of the covered apps: candidates whose domain
// (in any version) is excluded somewhere, then their latest row decides.
const selectExcludedCustomers = `SELECT public_id, app_id, customer_id FROM (
    SELECT public_id, app_id, customer_id, shop_domain FROM reporting_customers FINAL
    WHERE workspace_id = ? AND app_id IN ? AND public_id IN (
        SELECT public_id FROM reporting_customers WHERE workspace_id = ? AND app_id IN ? AND shop_domain GLOBAL IN (
            SELECT shop_domain FROM (` + excludedPairs + `)))
)
WHERE ` + isExcludedSQL

// Customer-scope conditions on the (app_id, customer_id) of the platform tables: the excluded
// customers bound as a set of pairs, or selected again when they are too many to bind.
const (
	andNotExcluded = `
    AND (app_id, customer_id) NOT IN (?)`
	andExcluded = `
    AND (app_id, customer_id) IN (?)`
	andNotExcludedQuery = `
    AND (app_id, customer_id) NOT IN (SELECT app_id, customer_id FROM (` + selectExcludedCustomers + `))`
	andExcludedQuery = `
    AND (app_id, customer_id) IN (SELECT app_id, customer_id FROM (` + selectExcludedCustomers + `))`
)

// The same conditions on the public_id of a reporting copy: the excluded customers' IDs bound as a
// set, or selected again.
const (
	andIDNotExcluded = `
    AND public_id NOT IN ?`
	andIDExcluded = `
    AND public_id IN ?`
	andIDNotExcludedQuery = `
    AND public_id NOT IN (SELECT public_id FROM (` + selectExcludedCustomers + `))`
	andIDExcludedQuery = `
    AND public_id IN (SELECT public_id FROM (` + selectExcludedCustomers + `))`
)

// chargeEventKindSQL maps a lifecycle event type to its EventKind number (billing.go), 0 for the
// types that do not decide a charge's state.
const chargeEventKindSQL = `transform(type, ['SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED',
        'SUBSCRIPTION_CHARGE_UNFROZEN', 'SUBSCRIPTION_CHARGE_FROZEN', 'SUBSCRIPTION_CHARGE_CANCELED', 'SUBSCRIPTION_CHARGE_DECLINED',
        'SUBSCRIPTION_CHARGE_EXPIRED', 'RELATIONSHIP_UNINSTALLED'], [1, 2, 3, 4, 5, 6, 7, 8], 0)`

// ---- Summary facts (summary_facts.go): two dates, A = asOf and B = the NRR opening date. ----

// selectChargeFacts reads the non-test subscription charges of the covered apps from the charge
// facts (migration 0027: one row per charge with what the derivation stored and its payments, kept
// at landing), through their text copy (0030: the charge's currency, state events, customer's uninstalls,
// payments, the payments' currencies when they differ from the charge's, and ID as one text). Go decides from them what decides the charge's states on A and B (METRICS 2.1, charge_text.go):
// the last state event before end(A) and end(B) (keys toUInt64(occurred_at) * 16 + kind, so the
// greatest key before end(D) × 16 is the last event before end(D)), when it ended for good (gone:
// its first own ending event or its customer's first uninstall from its first activation on,
// ChargeFacts.Ended; for a charge without events, its row's ended_at), which charges can matter
// (summaryCandidate), and its payment evidence (METRICS 2.3): its payments created in
// [end(B) − 45 days, end(A)), from end(B) − 395 days for an annual charge (every evidence window on
// A or B lies there). Searching a handful of numbers per charge in Go costs less than the dozen
// lambdas per row ClickHouse ran for it (docs/REPORTING_PERFORMANCE.md, "Charge facts as text").
// The charges retired before B's end (the facts' retired day, in the sorting key, so the same in
// every version) are left out before FINAL: summaryCandidate would drop them; live is a value of
// the latest version, so it is tested after FINAL. No billing date: a charge before its first
// billing date (METRICS 2.2) has no payment evidence either, so the date changes a reason, never a
// paying verdict or an amrCents, and the summary shows no reason. Arguments: workspace, apps, end(B)'s
// day (the timeline's: the first point's end).
const selectChargeFacts = `SELECT ` + customerKeySQL + ` AS key, amount_cents, annual, frozen, trial_days, accepted, activated, ended,
    states_derived, facts_text
FROM (
    SELECT public_id, live, amount_cents, annual, frozen, trial_days, accepted, activated, ended, states_derived, facts_text
    FROM reporting_charge_facts_text FINAL
    WHERE workspace_id = ? AND app_id IN ? AND retired >= ?
)
WHERE live = 1`

// chargeBillingDates are the covered apps' charges' billing dates (epoch seconds, 0 for none), the
// latest version of each (arguments: workspace, apps; the customer views add their customers).
const chargeBillingDates = `SELECT public_id, charge_id, ifNull(toUInt32(billing_on), 0) AS billing_on
        FROM reporting_charge_billing FINAL WHERE workspace_id = ? AND app_id IN ?`

// selectStateFallback computes, from the lifecycle events, what selectSummaryCharges reads from the
// row for the customers with a charge row written without its states (states_derived = 0): per
// charge its last state event before end(A) and end(B), its first activation and its first own
// ending, and per customer (” as the charge) its last uninstall (kind 8) and all its uninstalls.
// Arguments: end(A), end(B), workspace, apps, workspace, apps.
const selectStateFallback = `SELECT ` + customerKeySQL + ` AS key, charge,
    maxIf(k, occurred_at < toDateTime(?)) AS last_a,
    maxIf(k, occurred_at < toDateTime(?)) AS last_b,
    minIf(toUInt32(occurred_at), kind = 2) AS first_activated,
    minIf(toUInt32(occurred_at), kind IN (5, 6, 7)) AS own_end,
    groupArrayIf(toUInt32(occurred_at), kind = 8) AS uninstalls
FROM (
    SELECT public_id, if(kind = 8, '', charge_id) AS charge, occurred_at, ` + chargeEventKindSQL + ` AS kind,
        toUInt64(occurred_at) * 16 + kind AS k
    FROM reporting_events
    WHERE workspace_id = ? AND app_id IN ?
        AND type IN ('SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED', 'SUBSCRIPTION_CHARGE_UNFROZEN',
            'SUBSCRIPTION_CHARGE_FROZEN', 'SUBSCRIPTION_CHARGE_CANCELED', 'SUBSCRIPTION_CHARGE_DECLINED', 'SUBSCRIPTION_CHARGE_EXPIRED',
            'RELATIONSHIP_UNINSTALLED')
        AND public_id IN (
            SELECT public_id FROM reporting_charges
            WHERE workspace_id = ? AND app_id IN ? AND kind = 'subscription' AND test = 0 AND states_derived = 0)
)
GROUP BY public_id, charge`

// selectUsageFacts is each customer's usage per currency: gross over the trailing 30 days ending on
// A (usage MRR, concentration) and gross, net and count over the range (billed usage), from the
// usage days (migrations 0024 and 0028: usage sales already de-duplicated when they landed, and only
// the customer days that hold one), FINAL only over the day rows' versions. Both windows are whole
// UTC days (days since the epoch: A − 29 and the range's first day, up to A), so the days give
// exactly the sums of the sales' instants. A customer is read when it has a usage sale in either
// window (HAVING), as the sales themselves would give. Arguments: the trailing window's first day, the range's first day three times,
// workspace, apps, the earlier of the two first days, end(A)'s day.
const selectUsageFacts = `SELECT ` + customerKeySQL + ` AS key, currency,
    sumIf(usage_gross_cents, day >= ?) AS trailing_gross,
    sumIf(usage_gross_cents, day >= ?) AS range_gross,
    sumIf(usage_net_cents, day >= ?) AS range_net,
    sumIf(usage_sales, day >= ?) AS range_count
FROM reporting_usage_days FINAL
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?
GROUP BY public_id, currency
HAVING sum(usage_sales) > 0`

// usageTotalsHead is selectUsageFacts per currency, for the metrics that show no customer's usage:
// head, scope condition (on public_id), usageTotalsTail. The aggregation by customer is what it
// saves.
const (
	usageTotalsHead = `SELECT currency,
    sumIf(usage_gross_cents, day >= ?) AS trailing_gross,
    sumIf(usage_gross_cents, day >= ?) AS range_gross,
    sumIf(usage_net_cents, day >= ?) AS range_net,
    sumIf(usage_sales, day >= ?) AS range_count
FROM reporting_usage_days FINAL
WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?`
	usageTotalsTail = byCurrencyTail + `
HAVING sum(usage_sales) > 0`
)

// testCharges are the covered apps' test charges (test never changes between a charge's versions).
const testCharges = `SELECT app_id, charge_id FROM reporting_charges WHERE workspace_id = ? AND app_id IN ? AND test = 1`

// Observed usage charges per currency over the range's days, from the observed usage days
// (migration 0026: each customer's non-test usage records per day, charge and currency, already
// de-duplicated when they landed), FINAL only over the day rows' versions: head, scope condition
// (on public_id), observedDaysTail. The range is whole UTC days, so the days give exactly the
// records' sums. A record whose charge_id names a test charge is left out (METRICS 1.3; the
// record's own test flag is left out when the day is written): when read, since the charge can
// land after the record, and after the sums per app and charge, so that the test is made for a
// handful of rows rather than every day row. Arguments: workspace, apps, the first day, end(to)'s
// day, those of the scope condition, then workspace, apps (observedDaysTail).
const (
	observedUsageHead = `SELECT currency, sum(amount), sum(records)
FROM (
    SELECT currency, app_id, charge_id, sum(amount_cents) AS amount, sum(records) AS records
    FROM reporting_observed_days_fine FINAL` + observedDaysWhere
	// observedCurrenciesHead only tells which currencies have an observed usage charge, for the
	// metrics that do not show their sums: no FINAL, since a day row's versions share their
	// currency and charge and every one counts at least one record.
	observedCurrenciesHead = `SELECT currency, toInt64(0), sum(records)
FROM (
    SELECT currency, app_id, charge_id, sum(records) AS records
    FROM reporting_observed_days_fine` + observedDaysWhere
	observedDaysWhere = `
    WHERE workspace_id = ? AND app_id IN ? AND day >= ? AND day < ?`
	observedDaysTail = `
    GROUP BY currency, app_id, charge_id
)
WHERE (app_id, charge_id) NOT IN (` + testCharges + `)
GROUP BY currency`
	byCurrencyTail = `
GROUP BY currency`
)

// Usage activity (METRICS 4) of the covered apps: received usage events that occurred in [from, to),
// per name. Head, scope condition, tail.
const (
	usageActivityHead = `SELECT name, count() AS events, sum(quantity), max(toUInt32(occurred_at))
FROM usage_events FINAL
WHERE workspace_id = ? AND app_id IN ? AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)`
	usageActivityTail = `
GROUP BY name
ORDER BY events DESC, name`
)

// ---- Coverage and sync state (coverage.go). ----

const selectCursors = `SELECT app_id, stream, argMax(cursor, version) AS last_cursor, argMax(toUInt32(window_end), version) AS last_end
FROM sync_cursors
WHERE workspace_id = ? AND app_id IN ?
    AND stream IN ('transactions', 'transactions:start', 'lifecycle_events', 'lifecycle_events:start')
GROUP BY app_id, stream`

// selectSyncState is per app: the latest finish of a succeeded run, the latest finished run (not
// running) with its status and start, and the status of the latest run of any kind.
const selectSyncState = `SELECT app_id,
    maxIf(fin, st = 'succeeded') AS last_success,
    argMaxIf(st, started, st != 'running') AS finished_status,
    maxIf(started, st != 'running') AS finished_started,
    argMax(st, started) AS latest_status
FROM (
    SELECT app_id, run_id, argMax(toString(status), version) AS st, argMax(toUInt32(started_at), version) AS started,
        argMax(ifNull(toUInt32(finished_at), 0), version) AS fin
    FROM sync_runs
    WHERE workspace_id = ? AND app_id IN ?
    GROUP BY app_id, run_id
)
GROUP BY app_id`

// ---- Customers (customers.go, detail.go): the rows of a page's customers, reduced in Go. ----

// selectCustomerPageIDs is the first public IDs after the cursor among the covered apps' customer
// rows, versions included: the key range a page's customers lie in.
const selectCustomerPageIDs = `SELECT public_id FROM reporting_customers
WHERE workspace_id = ? AND public_id > ? AND app_id IN ?
ORDER BY public_id
LIMIT ?`

// customersFinal is the latest row of each customer with its exclusion flag: head, then a
// condition on the public ID (never changes), then customersFinalTail.
const (
	customersFinalHead = `SELECT app_id, customer_id, public_id, shop_domain, shop_name, status, installed, last_event, excluded
FROM (
    SELECT app_id, customer_id, public_id, shop_domain, shop_name, status,
        ifNull(toUInt32(first_installed_at), 0) AS installed, ifNull(toUInt32(last_event_at), 0) AS last_event,
        ` + isExcludedSQL + ` AS excluded
    FROM reporting_customers FINAL
    WHERE workspace_id = ? AND app_id IN ?`
	customersFinalTail = `
)`
)

// Conditions of customersFinal: a page's key range (after the cursor, up to the last ID the page
// can reach); the excluded candidates after the cursor; a public ID; the customers of a shop
// domain (lower case), whatever an older version said.
const (
	inPageRange   = ` AND public_id > ? AND public_id <= ?`
	excludedAfter = ` AND public_id > ? AND public_id IN (SELECT public_id FROM reporting_customers WHERE workspace_id = ? AND app_id IN ? AND shop_domain GLOBAL IN (SELECT shop_domain FROM (` + excludedPairs + `)))`
	byPublicID    = ` AND public_id = ?`
	byDomain      = ` AND public_id IN (SELECT public_id FROM reporting_customers WHERE workspace_id = ? AND app_id IN ? AND lower(shop_domain) = ?)`
	whereDomainIs = `
WHERE lower(shop_domain) = ?`
	whereIncluded = `
WHERE excluded = 0`
	whereExcluded = `
WHERE excluded = 1`
	orderByPublicID = `
ORDER BY public_id`
	orderLimitPublic = `
ORDER BY public_id
LIMIT ?`
)

// andPageCustomers restricts a reporting copy to a set of customers: their key range (a few
// granules), then the set itself.
const andPageCustomers = ` AND public_id >= ? AND public_id <= ? AND public_id IN ?`

// selectCustomerCharges reads every charge (all kinds, test ones too) of a set of customers, with
// the billing dates of the subscriptions. Arguments: workspace, apps, those of andPageCustomers
// (billing dates), workspace, apps, those of andPageCustomers.
const selectCustomerCharges = `SELECT public_id, charge_id, toString(kind), name, amount_cents, currency,
    toString(billing_interval), status, end_reason, test, trial_days, ifNull(toUInt32(accepted_at), 0),
    ifNull(toUInt32(activated_at), 0), ifNull(toUInt32(ended_at), 0), billing_on
FROM reporting_charges FINAL
ANY LEFT JOIN (` + chargeBillingDates + andPageCustomers + `) AS billing USING (public_id, charge_id)
WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers

// selectCustomerPayments is, per customer, charge and currency, the latest positive subscription
// payment before end(D) (a duplicate changes no maximum). Arguments: end(D), workspace, apps,
// those of andPageCustomers.
const selectCustomerPayments = `SELECT public_id, charge_id, currency, maxIf(toUInt32(created_at), created_at < toDateTime(?))
FROM reporting_customer_payments
WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers + `
GROUP BY public_id, charge_id, currency`

// selectCustomerEvents reads a set of customers' lifecycle events, one row per event key (an
// event's versions differ only in synced_at).
const selectCustomerEvents = `SELECT public_id, event_key, type, toUInt32(occurred_at), charge_id, charge_name,
    ifNull(amount_cents, 0), isNotNull(amount_cents), currency, reason, description
FROM reporting_events
WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers + `
LIMIT 1 BY app_id, event_key`

// selectCustomerTransactions reads a set of customers' transactions, the latest version of each.
const selectCustomerTransactions = `SELECT public_id, transaction_id, toString(type), toUInt32(created_at), currency,
    gross_cents, platform_fee_cents, net_cents, toString(billing_interval)
FROM reporting_transactions
WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers + `
ORDER BY synced_at DESC
LIMIT 1 BY app_id, transaction_id`

// selectCustomerUsageCharges reads a set of customers' non-test usage charges, the latest version
// of each.
const selectCustomerUsageCharges = `SELECT public_id, usage_record_id, currency, amount_cents, toUInt32(occurred_at)
FROM reporting_usage_charges
WHERE workspace_id = ? AND app_id IN ? AND test = 0` + andPageCustomers + `
    AND (app_id, charge_id) NOT IN (` + testCharges + `)
ORDER BY synced_at DESC
LIMIT 1 BY app_id, usage_record_id`

// selectCustomerUsageEventFacts is each customer's latest received usage event before end(D).
const selectCustomerUsageEventFacts = `SELECT public_id, maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?))
FROM reporting_usage_events
WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers + `
GROUP BY public_id`

// selectCustomerUsageActivity is METRICS 4.2 for one customer over [from, to).
const selectCustomerUsageActivity = `SELECT name, count() AS events, sum(quantity), max(toUInt32(occurred_at))
FROM reporting_usage_events FINAL
WHERE workspace_id = ? AND app_id IN ? AND public_id = ? AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)` +
	usageActivityTail

// The customer list needs less of a customer's events and usage charges than the detail, which also
// lists them: maxima and minima, which ClickHouse reduces without de-duplicating (a duplicate
// changes neither).

// selectListEventFacts is, per customer and per subscription charge (charge ” for the rest of the
// customer's events): the first event, the last before end(D), the charge's last state event before
// end(D) as its key and its first activation, the last and first uninstall and the last install
// before end(D), the charge's first own ending and every uninstall whatever D
// (customerFacts.reduceEvents computes the same from the rows). Arguments: end(D) five times,
// workspace, apps, then those of andPageCustomers.
const selectListEventFacts = `SELECT public_id, if(kind BETWEEN 1 AND 7 AND charge_id != '', charge_id, '') AS charge,
    min(toUInt32(occurred_at)),
    maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?)),
    maxIf(toUInt64(occurred_at) * 16 + kind, kind BETWEEN 1 AND 7 AND occurred_at < toDateTime(?)),
    minIf(toUInt32(occurred_at), kind = 2),
    maxIf(toUInt32(occurred_at), kind = 8 AND occurred_at < toDateTime(?)),
    minIf(toUInt32(occurred_at), kind = 8 AND occurred_at < toDateTime(?)),
    maxIf(toUInt32(occurred_at), type = 'RELATIONSHIP_INSTALLED' AND occurred_at < toDateTime(?)),
    minIf(toUInt32(occurred_at), kind IN (5, 6, 7)),
    groupArrayIf(toUInt32(occurred_at), kind = 8)
FROM (
    SELECT public_id, charge_id, type, occurred_at, ` + chargeEventKindSQL + ` AS kind
    FROM reporting_events
    WHERE workspace_id = ? AND app_id IN ?` + andPageCustomers + `
)
GROUP BY public_id, charge`

// selectListUsageChargeFacts is each customer's latest non-test usage charge before end(D).
const selectListUsageChargeFacts = `SELECT public_id, maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?))
FROM reporting_usage_charges
WHERE workspace_id = ? AND app_id IN ? AND test = 0` + andPageCustomers + `
    AND (app_id, charge_id) NOT IN (` + testCharges + `)
GROUP BY public_id`
