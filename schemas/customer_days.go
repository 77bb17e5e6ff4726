package schemas

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// CustomerDaysTable holds each customer's transactions per UTC day and currency, de-duplicated
// when they land (migration 0024). It has no materialized view: whoever lands transactions
// recomputes the days they touch with CustomerDays (the landing consumer), and a database with
// history is filled by AllCustomerDays (schemas/reportingbackfill).
const CustomerDaysTable = "reporting_customer_days"

// customerDaysHead recomputes days from reporting_transactions FINAL: every version of a re-synced
// transaction collapses to one before it is summed. Each row written is a whole day of one customer
// in one currency, so a later recomputation replaces it (its version is greater) rather than adding
// to it. Arguments: version, workspace.
const customerDaysHead = `INSERT INTO reporting_customer_days (workspace_id, app_id, day, public_id, currency, transactions, net_cents,
    usage_sales, usage_gross_cents, usage_net_cents, version)
SELECT workspace_id, app_id, intDiv(toUInt32(created_at), 86400) AS day, public_id, currency, count(), sum(net_cents),
    countIf(type = 'usage'), sumIf(gross_cents, type = 'usage'), sumIf(net_cents, type = 'usage'), toUInt64(?)
FROM reporting_transactions FINAL
WHERE workspace_id = ?`

// customerDaysOf narrows customerDaysHead to some customers of one app and a time range, which is
// a key range per customer (reporting_transactions is ordered by workspace, app, public ID, time).
// Arguments: app, public IDs, from, to (epoch seconds, whole days).
const customerDaysOf = `
    AND app_id = ? AND public_id IN (?) AND created_at >= toDateTime(?) AND created_at < toDateTime(?)`

const customerDaysTail = `
GROUP BY workspace_id, app_id, day, public_id, currency`

// Execer runs a statement; a ClickHouse connection is one.
type Execer interface {
	Exec(ctx context.Context, query string, args ...any) error
}

// CustomerDays recomputes, with version, the days from the day of from to the day of to (both
// included) of the given customers (public IDs) of one app.
func CustomerDays(ctx context.Context, conn Execer, version uint64, workspaceID, appID string, publicIDs []string, from, to time.Time) error {
	start := from.UTC().Truncate(24 * time.Hour)
	end := to.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	// A slice binds as an array literal, which IN does not take; a set of one-element tuples binds as
	// a list.
	set := make([]clickhouse.GroupSet, len(publicIDs))
	for i, id := range publicIDs {
		set[i] = clickhouse.GroupSet{Value: []any{id}}
	}
	return conn.Exec(ctx, customerDaysHead+customerDaysOf+customerDaysTail, version, workspaceID, appID, set, start.Unix(), end.Unix())
}

// AllCustomerDays recomputes every day of every customer of a workspace, and the charge facts
// (ChargeFactsTable), which hold the subscription sales as payments: what the landing consumer
// writes after transactions land, for the fixtures and loaders that insert directly.
func AllCustomerDays(ctx context.Context, conn Execer, version uint64, workspaceID string) error {
	if err := AllCustomerDaysOnly(ctx, conn, version, workspaceID); err != nil {
		return err
	}
	return AllChargeFacts(ctx, conn, version, workspaceID)
}

// AllCustomerDaysOnly recomputes every day of every customer of a workspace and nothing else.
func AllCustomerDaysOnly(ctx context.Context, conn Execer, version uint64, workspaceID string) error {
	return conn.Exec(ctx, customerDaysHead+customerDaysTail, version, workspaceID)
}

// CustomerDaysStatements are the statements above, for the tests that run every statement on the
// current ClickHouse too.
var CustomerDaysStatements = map[string]string{
	"customerDaysOf":  customerDaysHead + customerDaysOf + customerDaysTail,
	"allCustomerDays": customerDaysHead + customerDaysTail,
	"mismatches":      CustomerDaysMismatches,
	"usageMismatches": UsageDaysMismatches,
}

// UsageDaysTable is the customer days that hold a usage sale, copied by a materialized view
// (migration 0028), exact under FINAL because a customer day's usage sales never decrease from one
// version to the next.
const UsageDaysTable = "reporting_usage_days"

// UsageDaysMismatches counts the rows in which a workspace's usage days differ from its customer
// days with a usage sale, both FINAL: 0 when they agree. Arguments: workspace, workspace.
const UsageDaysMismatches = `SELECT count() FROM (
    SELECT workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents, count() AS n
    FROM (
        SELECT workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents
        FROM reporting_usage_days FINAL
        WHERE workspace_id = ?
        UNION ALL
        SELECT workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents
        FROM reporting_customer_days FINAL
        WHERE workspace_id = ? AND usage_sales > 0
    )
    GROUP BY workspace_id, app_id, day, public_id, currency, usage_sales, usage_gross_cents, usage_net_cents
    HAVING n != 2
)`

// CustomerDaysMismatches counts the rows in which a workspace's customer days differ from the days
// recomputed from platform_transactions, the landed table itself (FINAL): 0 when they agree. The
// tests of the consumer and of the backfill check it. Arguments: workspace, workspace.
const CustomerDaysMismatches = `SELECT count() FROM (
    SELECT workspace_id, app_id, day, public_id, currency, transactions, net_cents, usage_sales, usage_gross_cents, usage_net_cents,
        count() AS n
    FROM (
        SELECT workspace_id, app_id, day, public_id, currency, transactions, net_cents, usage_sales, usage_gross_cents, usage_net_cents
        FROM reporting_customer_days FINAL
        WHERE workspace_id = ?
        UNION ALL
        SELECT workspace_id, app_id, intDiv(toUInt32(created_at), 86400) AS day,
            concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id, currency,
            count(), sum(net_cents), countIf(type = 'usage'), sumIf(gross_cents, type = 'usage'), sumIf(net_cents, type = 'usage')
        FROM platform_transactions FINAL
        WHERE workspace_id = ?
        GROUP BY workspace_id, app_id, day, public_id, currency
    )
    GROUP BY workspace_id, app_id, day, public_id, currency, transactions, net_cents, usage_sales, usage_gross_cents, usage_net_cents
    HAVING n != 2
)`
