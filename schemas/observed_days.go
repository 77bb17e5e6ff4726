package schemas

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ObservedDaysTable holds each customer's non-test observed usage charges per UTC day, charge and
// currency, de-duplicated when they land (migration 0026). Like the customer days it has no
// materialized view: the landing consumer recomputes the days a batch's usage records touch with
// ObservedDays, and a database with history is filled by AllObservedDays
// (schemas/reportingbackfill).
const ObservedDaysTable = "reporting_observed_days"

// observedDaysHead recomputes days from reporting_usage_charges FINAL (ordered by customer, then
// time): every version of a re-synced record collapses to one before it is summed. A record's
// versions share its test flag, so the condition on it may apply before they are merged. Each row
// written is a whole day of one customer, charge and currency, so a later recomputation replaces
// it. Arguments: version, workspace.
const observedDaysHead = `INSERT INTO reporting_observed_days (workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents,
    version)
SELECT workspace_id, app_id, intDiv(toUInt32(occurred_at), 86400) AS day, public_id, charge_id, currency, count(), sum(amount_cents),
    toUInt64(?)
FROM reporting_usage_charges FINAL
WHERE workspace_id = ? AND test = 0`

// observedDaysOf narrows observedDaysHead to some customers of one app and whole days (a key range
// per customer). Arguments: app, public IDs, from, to (epoch seconds).
const observedDaysOf = `
    AND app_id = ? AND public_id IN (?) AND occurred_at >= toDateTime(?) AND occurred_at < toDateTime(?)`

const observedDaysTail = `
GROUP BY workspace_id, app_id, day, public_id, charge_id, currency`

// ObservedDays recomputes, with version, the days from the day of from to the day of to (both
// included) of the given customers (public IDs) of one app.
func ObservedDays(ctx context.Context, conn Execer, version uint64, workspaceID, appID string, publicIDs []string, from, to time.Time) error {
	start := from.UTC().Truncate(24 * time.Hour)
	end := to.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	set := make([]clickhouse.GroupSet, len(publicIDs))
	for i, id := range publicIDs {
		set[i] = clickhouse.GroupSet{Value: []any{id}}
	}
	return conn.Exec(ctx, observedDaysHead+observedDaysOf+observedDaysTail, version, workspaceID, appID, set, start.Unix(), end.Unix())
}

// AllObservedDays recomputes every day of every customer of a workspace.
func AllObservedDays(ctx context.Context, conn Execer, version uint64, workspaceID string) error {
	return conn.Exec(ctx, observedDaysHead+observedDaysTail, version, workspaceID)
}

// AllDays recomputes a workspace's customer days, charge facts and observed usage days, as the landing consumer
// would after its records landed (for the fixtures and loaders that insert directly).
func AllDays(ctx context.Context, conn Execer, version uint64, workspaceID string) error {
	if err := AllCustomerDays(ctx, conn, version, workspaceID); err != nil {
		return err
	}
	return AllObservedDays(ctx, conn, version, workspaceID)
}

// ObservedDaysStatements are the statements above, for the tests that run every statement on the
// current ClickHouse too.
var ObservedDaysStatements = map[string]string{
	"observedDaysOf":  observedDaysHead + observedDaysOf + observedDaysTail,
	"allObservedDays": observedDaysHead + observedDaysTail,
	"mismatches":      ObservedDaysMismatches,
}

// ObservedDaysMismatches counts the rows in which a workspace's observed usage days differ from
// the days recomputed from platform_usage_charges, the landed table itself (FINAL): 0 when they
// agree. Arguments: workspace, workspace.
const ObservedDaysMismatches = `SELECT count() FROM (
    SELECT workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents, count() AS n
    FROM (
        SELECT workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents
        FROM reporting_observed_days FINAL
        WHERE workspace_id = ?
        UNION ALL
        SELECT workspace_id, app_id, intDiv(toUInt32(occurred_at), 86400) AS day,
            concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id, charge_id, currency,
            count(), sum(amount_cents)
        FROM platform_usage_charges FINAL
        WHERE workspace_id = ? AND test = 0
        GROUP BY workspace_id, app_id, day, public_id, charge_id, currency
    )
    GROUP BY workspace_id, app_id, day, public_id, charge_id, currency, records, amount_cents
    HAVING n != 2
)`
