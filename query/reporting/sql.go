package reporting

// Queries of the reporting store. They run on ClickHouse 18.16 and on current ClickHouse (no window
// functions, CTE subqueries, DateTime64 or JSONExtract; compat_test.go runs every one, in every
// composition, on the current engine). Input is only ever bound with the driver's client-side `?`
// binding; optional conditions are constant fragments appended in code. Instants are bound as epoch
// seconds and read back as UInt32 epoch seconds (0 = none), which also keeps Nullable columns out of
// aggregate functions.
//
// De-duplication (every table is a ReplacingMergeTree; a duplicate must never count twice):
//   - customers and charges (small) are read with FINAL;
//   - sums are read with FINAL restricted by the partition key to the dates they add up (a month or
//     two for the default range), which is cheaper than collapsing each ID with GROUP BY, and never
//     FINAL over a whole large table;
//   - maxima and minima (the latest payment, the last lifecycle event) read the raw rows: a duplicate
//     changes neither;
//   - one customer's rows (the list and the detail) are collapsed with LIMIT 1 BY their ID.
//
// Under FINAL, conditions are only on columns that never change between a row's versions (IDs,
// workspace, app, customer, type, test flags, the row's date), because 18.16 may apply them before
// the versions are merged.
//
// Customer conditions also name customer_id alone (`customer_id IN (?)`): ClickHouse moves that
// condition to PREWHERE (it never moves one on a primary-key column such as app_id), so only the
// customer_id column is read in full.

// excludedPairs are the (shop_domain, app_id) keys a workspace currently excludes (an empty app_id
// means every app): the latest customer_exclusions row per key decides.
const excludedPairs = `SELECT shop_domain, app_id FROM (
        SELECT shop_domain, app_id, argMax(excluded, version) AS is_excluded
        FROM customer_exclusions WHERE workspace_id = ? GROUP BY shop_domain, app_id
    ) WHERE is_excluded = 1`

// excludedCustomers are the customers of the covered apps excluded for their domain in their app
// or in every app.
const excludedCustomers = `SELECT app_id, customer_id FROM (
        SELECT app_id, customer_id, shop_domain FROM platform_customers FINAL WHERE workspace_id = ? AND app_id IN ?
    ) WHERE (shop_domain, app_id) IN (` + excludedPairs + `) OR (shop_domain, '') IN (` + excludedPairs + `)`

// Customer-scope conditions on (app_id, customer_id).
const (
	andNotExcluded = `
    AND (app_id, customer_id) NOT IN (` + excludedCustomers + `)`
	andExcluded = `
    AND (app_id, customer_id) IN (` + excludedCustomers + `)`
)

// selectExcludedCustomers lists the excluded customers (the summary scopes per-customer facts in Go).
const selectExcludedCustomers = excludedCustomers

// chargeEventKindSQL maps a lifecycle event type to its EventKind number (billing.go), 0 for the
// types that do not decide a charge's state.
const chargeEventKindSQL = `transform(type, ['SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED',
        'SUBSCRIPTION_CHARGE_UNFROZEN', 'SUBSCRIPTION_CHARGE_FROZEN', 'SUBSCRIPTION_CHARGE_CANCELED', 'SUBSCRIPTION_CHARGE_DECLINED',
        'SUBSCRIPTION_CHARGE_EXPIRED', 'RELATIONSHIP_UNINSTALLED'], [1, 2, 3, 4, 5, 6, 7, 8], 0)`

// ---- Summary facts (summary_facts.go): two dates, A = asOf and B = the NRR opening date. ----

// chargeStateEvents reduces the events that decide charge states (METRICS 2.1), per charge: its last
// state event before end(A) and before end(B) as a key (toUInt64(occurred_at) * 16 + kind, the
// replay order of step 2), and its first activation.
const chargeStateEvents = `SELECT app_id, charge_id,
        maxIf(k, occurred_at < toDateTime(?)) AS last_a,
        maxIf(k, occurred_at < toDateTime(?)) AS last_b,
        minIf(toUInt32(occurred_at), kind = 2) AS first_activated
    FROM (
        SELECT app_id, charge_id, occurred_at, ` + chargeEventKindSQL + ` AS kind, toUInt64(occurred_at) * 16 + kind AS k
        FROM platform_lifecycle_events
        WHERE workspace_id = ? AND app_id IN ?
            AND type IN ('SUBSCRIPTION_CHARGE_ACCEPTED', 'SUBSCRIPTION_CHARGE_ACTIVATED', 'SUBSCRIPTION_CHARGE_UNFROZEN',
                'SUBSCRIPTION_CHARGE_FROZEN', 'SUBSCRIPTION_CHARGE_CANCELED', 'SUBSCRIPTION_CHARGE_DECLINED', 'SUBSCRIPTION_CHARGE_EXPIRED')
    )
    GROUP BY app_id, charge_id`

// selectSummaryCharges reads the non-test subscription charges of the covered apps, each with its
// state events joined in ClickHouse (one hash join there instead of one per charge in Go).
const selectSummaryCharges = `SELECT app_id, customer_id, charge_id, amount_cents, currency, billing, status, end_reason, trial_days,
    accepted, activated, ended, last_a, last_b, first_activated
FROM (
    SELECT app_id, charge_id, customer_id, amount_cents, currency, toString(billing_interval) AS billing, status, end_reason, trial_days,
        ifNull(toUInt32(accepted_at), 0) AS accepted, ifNull(toUInt32(activated_at), 0) AS activated, ifNull(toUInt32(ended_at), 0) AS ended
    FROM platform_charges FINAL
    WHERE workspace_id = ? AND app_id IN ? AND kind = 'subscription' AND test = 0
) AS charges ANY LEFT JOIN (
    ` + chargeStateEvents + `
) AS state USING (app_id, charge_id)`

// selectUninstalls is each customer's last uninstall before end(A) and before end(B).
const selectUninstalls = `SELECT app_id, customer_id,
    maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?)) AS last_a,
    maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?)) AS last_b
FROM platform_lifecycle_events
WHERE workspace_id = ? AND app_id IN ? AND type = 'RELATIONSHIP_UNINSTALLED'
GROUP BY app_id, customer_id`

// selectPaymentFacts reads, per customer and currency, the latest positive subscription payment
// before end(A) and before end(B) (METRICS 2.3). A 30-day plan's evidence lies in the 45 days
// before each date, all on or after end(B) − 45 days; only customers with an annual charge need the
// older rows, back to end(B) − 395 days, so the rest of that year is read for them alone.
const selectPaymentFacts = `SELECT app_id, customer_id, currency,
    maxIf(toUInt32(created_at), created_at < toDateTime(?)) AS paid_a,
    maxIf(toUInt32(created_at), created_at < toDateTime(?)) AS paid_b
FROM platform_transactions
WHERE workspace_id = ? AND app_id IN ? AND type = 'subscription' AND gross_cents > 0
    AND created_at >= toDateTime(?) AND created_at < toDateTime(?)
    AND (created_at >= toDateTime(?) OR customer_id IN (
        SELECT customer_id FROM platform_charges WHERE workspace_id = ? AND app_id IN ? AND billing_interval = 'annual'))
GROUP BY app_id, customer_id, currency`

// selectUsageFacts is each customer's usage per currency: gross over the trailing 30 days ending on
// A (usage MRR, concentration) and gross, net and count over the range (billed usage). FINAL over
// the partitions of the two windows only.
const selectUsageFacts = `SELECT app_id, customer_id, currency,
    sumIf(gross_cents, created_at >= toDateTime(?)) AS trailing_gross,
    sumIf(gross_cents, created_at >= toDateTime(?)) AS range_gross,
    sumIf(net_cents, created_at >= toDateTime(?)) AS range_net,
    countIf(created_at >= toDateTime(?)) AS range_count
FROM platform_transactions FINAL
WHERE workspace_id = ? AND app_id IN ? AND type = 'usage' AND created_at >= toDateTime(?) AND created_at < toDateTime(?)
GROUP BY app_id, customer_id, currency`

// testCharges are the covered apps' test charges (test never changes between a charge's versions).
const testCharges = `SELECT app_id, charge_id FROM platform_charges WHERE workspace_id = ? AND app_id IN ? AND test = 1`

// Observed usage charges per currency in [from, to): head, scope condition, tail. A usage record
// carries its own test flag (migration 0009: the partner API links a usage record to no
// subscription); a record whose charge_id names a test charge is left out too (METRICS 1.3).
const (
	observedUsageHead = `SELECT currency, sum(amount_cents), count()
FROM platform_usage_charges FINAL
WHERE workspace_id = ? AND app_id IN ? AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?) AND test = 0
    AND (app_id, charge_id) NOT IN (` + testCharges + `)`
	byCurrencyTail = `
GROUP BY currency`
)

// Usage activity (METRICS 4): received usage events that occurred in [from, to), per name. Head,
// optional customer condition, scope condition, tail.
const (
	usageActivityHead = `SELECT name, count() AS events, sum(quantity), max(toUInt32(occurred_at))
FROM usage_events FINAL
WHERE workspace_id = ? AND app_id IN ? AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)`
	usageActivityTail = `
GROUP BY name
ORDER BY events DESC, name`
)

// andCustomers restricts a table to a set of customers: by ID alone (PREWHERE) and by (app, ID).
const andCustomers = ` AND customer_id IN (?) AND (app_id, customer_id) IN (?)`

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

// customersFinal is the latest row of each customer of the covered apps with its exclusion flag.
const customersFinal = `SELECT app_id, customer_id, public_id, shop_domain, shop_name, status,
        ifNull(toUInt32(first_installed_at), 0) AS installed, ifNull(toUInt32(last_event_at), 0) AS last_event,
        (shop_domain, app_id) IN (` + excludedPairs + `) OR (shop_domain, '') IN (` + excludedPairs + `) AS excluded
    FROM platform_customers FINAL
    WHERE workspace_id = ? AND app_id IN ?`

// A page of the customer list: head, optional scope condition, tail (cursor, then limit).
const (
	customerPageHead = `SELECT app_id, customer_id, public_id, shop_domain, shop_name, status, installed, last_event, excluded
FROM (
    ` + customersFinal + `
)
WHERE public_id > ?`
	andIncludedCustomer = ` AND excluded = 0`
	andExcludedCustomer = ` AND excluded = 1`
	customerPageTail    = `
ORDER BY public_id
LIMIT ?`
)

// selectCustomerByRef finds a customer by public ID or by shop domain (lower case).
const selectCustomerByRef = `SELECT app_id, customer_id, public_id, shop_domain, shop_name, status, installed, last_event, excluded
FROM (
    ` + customersFinal + `
)
WHERE public_id = ? OR lower(shop_domain) = ?
ORDER BY public_id
LIMIT 100`

// selectCustomerCharges reads every charge (all kinds, test ones too) of a set of customers.
const selectCustomerCharges = `SELECT app_id, charge_id, customer_id, toString(kind), name, amount_cents, currency,
    toString(billing_interval), status, end_reason, test, trial_days, ifNull(toUInt32(accepted_at), 0),
    ifNull(toUInt32(activated_at), 0), ifNull(toUInt32(ended_at), 0)
FROM platform_charges FINAL
WHERE workspace_id = ? AND app_id IN ?` + andCustomers

// selectCustomerEvents reads a set of customers' lifecycle events, one row per event key (an
// event's versions differ only in synced_at).
const selectCustomerEvents = `SELECT app_id, customer_id, event_key, type, toUInt32(occurred_at), charge_id, charge_name,
    ifNull(amount_cents, 0), isNotNull(amount_cents), currency, reason, description
FROM platform_lifecycle_events
WHERE workspace_id = ? AND app_id IN ?` + andCustomers + `
LIMIT 1 BY app_id, event_key`

// selectCustomerTransactions reads a set of customers' transactions, the latest version of each.
const selectCustomerTransactions = `SELECT app_id, customer_id, transaction_id, toString(type), toUInt32(created_at), currency,
    gross_cents, platform_fee_cents, net_cents, toString(billing_interval)
FROM platform_transactions
WHERE workspace_id = ? AND app_id IN ?` + andCustomers + `
ORDER BY synced_at DESC
LIMIT 1 BY app_id, transaction_id`

// selectCustomerUsageCharges reads a set of customers' non-test usage charges, the latest version
// of each.
const selectCustomerUsageCharges = `SELECT app_id, customer_id, usage_record_id, currency, amount_cents, toUInt32(occurred_at)
FROM platform_usage_charges
WHERE workspace_id = ? AND app_id IN ? AND test = 0` + andCustomers + `
    AND (app_id, charge_id) NOT IN (` + testCharges + `)
ORDER BY synced_at DESC
LIMIT 1 BY app_id, usage_record_id`

// selectCustomerUsageEventFacts is each customer's latest received usage event before end(D).
const selectCustomerUsageEventFacts = `SELECT app_id, customer_id, maxIf(toUInt32(occurred_at), occurred_at < toDateTime(?))
FROM usage_events
WHERE workspace_id = ? AND app_id IN ?` + andCustomers + `
GROUP BY app_id, customer_id`
