package schemas

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ChargeFactsTable holds each non-test subscription charge with its state facts and payments
// (migration 0027). Like the customer days it has no materialized view: the landing consumer
// recomputes the rows of the customers a batch names with ChargeFacts once it has written their
// charges, and a database with history is filled by AllChargeFacts (schemas/reportingbackfill).
const ChargeFactsTable = "reporting_charge_facts"

// RetiredNever is the retired day of a charge that can still be in effect or be evidence.
const RetiredNever = 4294967295

// chargeFactsHead recomputes charge rows from reporting_charges FINAL (its latest version: what
// the summary read) joined to the charge's positive subscription sales (reporting_customer_payments,
// ordered by customer; a re-synced sale collapses by DISTINCT). The state facts are those the
// summary computes for its candidates (query/reporting/sql.go, selectSummaryCharges): gone is when
// the charge ended for good; in_effect says the charge's last state event, after every uninstall,
// leaves it active or frozen. A charge is retired from the day of the latest of gone plus its
// evidence window, its last event, its customer's last uninstall and its row's end: from then on no
// date's candidate condition keeps it. Rows whose states are not derived are never retired (their
// events are read apart). Arguments: version, workspace, then chargeFactsOf's (charges), workspace,
// then chargeFactsOf's (payments).
const (
	chargeFactsInsert = `INSERT INTO reporting_charge_facts (workspace_id, app_id, retired, public_id, charge_id, live, amount_cents, currency,
    annual, frozen, trial_days, accepted, activated, ended, states_derived, state_events, customer_uninstalls, payments,
    payment_currencies, version)
` + chargeFactsSelect
	chargeFactsSelect = `SELECT workspace_id, app_id,
    if(states_derived = 0 OR gone = 0 OR in_effect, toUInt32(4294967295),
        toUInt32(intDiv(greatest(greatest(toUInt64(gone) + if(annual, 395, 45) * 86400, toUInt64(last_event)),
            greatest(toUInt64(last_uninstall), toUInt64(ended))), 86400))) AS retired,
    public_id, charge_id, toUInt8(1), amount_cents, currency, annual, frozen, trial_days, accepted, activated, ended, states_derived,
    state_events, uninstalls AS customer_uninstalls, payments, payment_currencies, toUInt64(?) AS version
FROM (
    SELECT workspace_id, app_id, public_id, charge_id, amount_cents, currency, toUInt8(billing_interval = 'annual') AS annual,
        toUInt8(lower(status) = 'frozen') AS frozen, trial_days, ifNull(toUInt32(accepted_at), 0) AS accepted,
        ifNull(toUInt32(activated_at), 0) AS activated, ifNull(toUInt32(ended_at), 0) AS ended, states_derived, state_events,
        arrayMap(t -> toUInt32(t), customer_uninstalls) AS uninstalls,
        arrayReduce('max', state_events) AS last_key,
        toUInt32(intDiv(last_key, 16)) AS last_event,
        toUInt32(arrayReduce('max', uninstalls)) AS last_uninstall,
        toUInt32(intDiv(arrayReduce('min', arrayFilter(k -> k % 16 = 2, state_events)), 16)) AS first_activated,
        if(empty(state_events), ended, toUInt32(intDiv(arrayReduce('min', arrayFilter(k -> k % 16 IN (5, 6, 7), state_events)), 16))) AS own_end,
        if(first_activated = 0, 0, toUInt32(arrayReduce('min', arrayFilter(t -> t >= first_activated, uninstalls)))) AS uninstall_end,
        if(own_end = 0, uninstall_end, if(uninstall_end = 0, own_end, least(own_end, uninstall_end))) AS gone,
        last_key % 16 IN (2, 3, 4)
            AND NOT (first_activated > 0 AND last_uninstall >= first_activated AND toUInt64(last_uninstall) * 16 + 8 > last_key) AS in_effect
    FROM reporting_charges FINAL
    WHERE workspace_id = ? AND kind = 'subscription' AND test = 0`
	chargeFactsPayments = `
) AS charges GLOBAL ANY LEFT JOIN (
    SELECT app_id, public_id, charge_id, groupArray(at) AS payments, groupArray(currency) AS payment_currencies
    FROM (
        SELECT DISTINCT app_id, public_id, charge_id, toUInt32(created_at) AS at, currency
        FROM reporting_customer_payments
        WHERE workspace_id = ?`
	chargeFactsTail = `
    )
    GROUP BY app_id, public_id, charge_id
) AS paid USING (app_id, public_id, charge_id)`

	// chargeFactsOf narrows a read to some customers of one app. Arguments: app, public IDs.
	chargeFactsOf = ` AND app_id = ? AND public_id IN (?)`

	// chargeFactsRetire replaces, with live = 0, the rows of the customers just recomputed that the
	// recomputation did not write (their version is older): a charge whose retired day moved, or
	// that is no longer a non-test subscription. Arguments: version, workspace, chargeFactsOf's,
	// version.
	chargeFactsRetire = `INSERT INTO reporting_charge_facts (workspace_id, app_id, retired, public_id, charge_id, live, version)
SELECT workspace_id, app_id, retired, public_id, charge_id, toUInt8(0), toUInt64(?)
FROM (
    SELECT workspace_id, app_id, retired, public_id, charge_id, live, version
    FROM reporting_charge_facts FINAL
    WHERE workspace_id = ?`
	chargeFactsRetireTail = `
)
WHERE live = 1 AND version < ?`
)

// ChargeFacts recomputes, with version, the charge facts of the given customers (public IDs) of
// one app. It runs after their charges are written.
func ChargeFacts(ctx context.Context, conn Execer, version uint64, workspaceID, appID string, publicIDs []string) error {
	set := make([]clickhouse.GroupSet, len(publicIDs))
	for i, id := range publicIDs {
		set[i] = clickhouse.GroupSet{Value: []any{id}}
	}
	err := conn.Exec(ctx, chargeFactsInsert+chargeFactsOf+chargeFactsPayments+chargeFactsOf+chargeFactsTail,
		version, workspaceID, appID, set, workspaceID, appID, set)
	if err != nil {
		return err
	}
	return conn.Exec(ctx, chargeFactsRetire+chargeFactsOf+chargeFactsRetireTail, version, workspaceID, appID, set, version)
}

// AllChargeFacts recomputes the charge facts of every customer of a workspace.
func AllChargeFacts(ctx context.Context, conn Execer, version uint64, workspaceID string) error {
	if err := conn.Exec(ctx, chargeFactsInsert+chargeFactsPayments+chargeFactsTail, version, workspaceID, workspaceID); err != nil {
		return err
	}
	return conn.Exec(ctx, chargeFactsRetire+chargeFactsRetireTail, version, workspaceID, version)
}

// ChargeFactsStatements are the statements above, for the tests that run every statement on the
// current ClickHouse too.
var ChargeFactsStatements = map[string]string{
	"chargeFactsOf":  chargeFactsInsert + chargeFactsOf + chargeFactsPayments + chargeFactsOf + chargeFactsTail,
	"allChargeFacts": chargeFactsInsert + chargeFactsPayments + chargeFactsTail,
	"retireOf":       chargeFactsRetire + chargeFactsOf + chargeFactsRetireTail,
	"retireAll":      chargeFactsRetire + chargeFactsRetireTail,
	"mismatches":     ChargeFactsMismatches,
}

// ChargeFactsMismatches counts the live charge rows of a workspace that differ from a
// recomputation from reporting_charges and reporting_customer_payments (charges in either but not
// both, or with other values): 0 when they agree. Arguments: workspace, 0 (a version), workspace,
// workspace.
const ChargeFactsMismatches = `SELECT count() FROM (
    SELECT app_id, public_id, charge_id, retired, amount_cents, currency, annual, frozen, trial_days, accepted, activated, ended,
        states_derived, state_events, customer_uninstalls, arraySort(arrayMap((t, c) -> concat(toString(t), c), payments, payment_currencies)) AS paid,
        count() AS n
    FROM (
        SELECT app_id, public_id, charge_id, retired, amount_cents, currency, annual, frozen, trial_days, accepted, activated, ended,
            states_derived, state_events, customer_uninstalls, payments, payment_currencies
        FROM (SELECT * FROM reporting_charge_facts FINAL WHERE workspace_id = ?) WHERE live = 1
        UNION ALL
        SELECT app_id, public_id, charge_id, retired, amount_cents, currency, annual, frozen, trial_days, accepted, activated, ended,
            states_derived, state_events, customer_uninstalls, payments, payment_currencies
        FROM (` + chargeFactsSelect + chargeFactsPayments + chargeFactsTail + `)
    )
    GROUP BY app_id, public_id, charge_id, retired, amount_cents, currency, annual, frozen, trial_days, accepted, activated, ended,
        states_derived, state_events, customer_uninstalls, paid
    HAVING n != 2
)`
