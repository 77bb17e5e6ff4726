package reporting

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// sqlConstants are every query constant of sql.go; the compatibility test checks that each one was
// sent, so a new constant cannot escape it.
var sqlConstants = map[string]string{
	"selectExclusionCount": selectExclusionCount, "selectExcludedCustomers": selectExcludedCustomers, "andNotExcluded": andNotExcluded, "andExcluded": andExcluded,
	"andNotExcludedQuery": andNotExcludedQuery, "andExcludedQuery": andExcludedQuery, "selectChargeFacts": selectChargeFacts,
	"selectStateFallback": selectStateFallback, "selectUsageFacts": selectUsageFacts,
	"observedUsageHead": observedUsageHead, "byCurrencyTail": byCurrencyTail, "usageActivityHead": usageActivityHead,
	"usageActivityTail": usageActivityTail, "selectCursors": selectCursors, "selectSyncState": selectSyncState,
	"selectCustomerPageIDs": selectCustomerPageIDs, "customersFinalHead": customersFinalHead, "customersFinalTail": customersFinalTail,
	"inPageRange": inPageRange, "excludedAfter": excludedAfter, "byPublicID": byPublicID, "byDomain": byDomain,
	"whereDomainIs": whereDomainIs, "whereIncluded": whereIncluded, "whereExcluded": whereExcluded, "orderByPublicID": orderByPublicID,
	"orderLimitPublic": orderLimitPublic, "andPageCustomers": andPageCustomers, "selectCustomerCharges": selectCustomerCharges,
	"selectCustomerEvents": selectCustomerEvents, "selectCustomerTransactions": selectCustomerTransactions,
	"selectCustomerUsageCharges": selectCustomerUsageCharges, "selectCustomerUsageEventFacts": selectCustomerUsageEventFacts,
	"selectCustomerUsageActivity": selectCustomerUsageActivity, "selectDataVersion": selectDataVersion,
	"selectListEventFacts": selectListEventFacts, "selectListUsageChargeFacts": selectListUsageChargeFacts,
	"andIDNotExcluded": andIDNotExcluded, "andIDExcluded": andIDExcluded, "andIDNotExcludedQuery": andIDNotExcludedQuery,
	"andIDExcludedQuery": andIDExcludedQuery, "usageTotalsHead": usageTotalsHead, "observedCurrenciesHead": observedCurrenciesHead,
	"observedDaysWhere": observedDaysWhere, "observedDaysTail": observedDaysTail, "usageTotalsTail": usageTotalsTail,
	// customers_sql.go: the list's search.
	"selectSearchPageIDs": selectSearchPageIDs, "whereSearch": whereSearch, "andSearch": andSearch,
}

// TestQueriesRunOnCurrentClickHouse sends every request shape through the store on ClickHouse 18.16
// (recording each query with its arguments), then runs exactly those queries, with the arguments
// inlined as the driver's client-side binding does, on the current engine over the migrated schema
// and a few rows of every table.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	e := setup(t)
	e.fx.RawCharges = true // charge rows without their states: the summary reads those from the events too
	reportingtest.Example37(e.fx, "app-1")
	cs := reportingtest.ExampleLifecycle(e.fx, "app-a", "app-b")
	e.fx.Flush(t)
	sc := scopeOf("app-1", "app-a", "app-b")
	// The responses of the same data are computed every time, so that each form is sent; then once
	// through the cache, which reads the data version.
	store := New(e.rec, WithClock(reportingtest.Clock), WithResultCache(0))
	if _, err := e.store.Summary(ctx(t), Request{Scope: sc, Range: defaultRange, CustomerScope: ScopeIncluded}); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { maxBoundCustomers = n }(maxBoundCustomers)
	for _, bound := range []int{maxBoundCustomers, 0} { // excluded customers bound, then selected again
		maxBoundCustomers = bound
		for _, cscope := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
			req := Request{Scope: sc, Range: defaultRange, CustomerScope: cscope}
			for _, m := range Metrics {
				if _, err := store.Metric(ctx(t), m, req); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := store.Customers(ctx(t), ListRequest{Scope: sc, Range: defaultRange, CustomerScope: cscope, Limit: 2, Cursor: cs["papa"].ID()}); err != nil {
				t.Fatal(err)
			}
			paying := true
			if _, err := store.Customers(ctx(t), ListRequest{Scope: sc, Range: defaultRange, CustomerScope: cscope, Limit: 2, Search: "O", Paying: &paying}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ref := range []string{"papa.myshopify.com", cs["papa"].ID()} {
		if _, err := e.store.Customer(ctx(t), DetailRequest{Scope: sc, Ref: ref, Range: defaultRange}); err != nil {
			t.Fatal(err)
		}
	}

	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements, sampleRows...)
	sent := map[string]bool{}
	queries := slices.Sorted(func(yield func(string) bool) {
		for q := range e.rec.queries {
			if !yield(q) {
				return
			}
		}
	})
	for _, q := range queries {
		statements = append(statements, inline(t, q, e.rec.queries[q]...))
		for name, c := range sqlConstants {
			if strings.Contains(q, c) {
				sent[name] = true
			}
		}
	}
	for name := range sqlConstants {
		if !sent[name] {
			t.Errorf("%s was never sent, so it is not checked on the current engine", name)
		}
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}

// sampleRows give every table read a row, so that the queries evaluate their expressions.
var sampleRows = []string{
	`INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_domain, shop_name, status, version, public_id)
SELECT 'ws', 'app-1', 'gid://shopify/Shop/1', 'a.myshopify.com', 'A', 'installed', 1, 'cus_00000000000000000001'`,
	`INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status,
test, trial_days, activated_at, version)
SELECT 'ws', 'app-1', 'c1', 'gid://shopify/Shop/1', 'subscription', 'P', 100, 'USD', '', 'active', 0, 0, toDateTime('2026-03-01 00:00:00', 'UTC'), 1`,
	`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, occurred_at, charge_id, synced_at)
SELECT 'ws', 'app-1', 'k1', 'SUBSCRIPTION_CHARGE_ACTIVATED', 'gid://shopify/Shop/1', toDateTime('2026-03-01 00:00:00', 'UTC'), 'c1', now()`,
	`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, charge_id, created_at, currency, gross_cents,
platform_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', 'app-1', 't1', 'subscription', 'gid://shopify/Shop/1', 'c1', toDateTime('2026-03-10 00:00:00', 'UTC'), 'USD', 100, 15, 85, 'every_30_days', now()`,
	`INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, amount_cents, currency, occurred_at, synced_at)
SELECT 'ws', 'app-1', 'u1', 'gid://shopify/Shop/1', 'c1', 10, 'USD', toDateTime('2026-03-10 00:00:00', 'UTC'), now()`,
	`INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)
SELECT 'ws', 'app-1', 'e1', 'gid://shopify/Shop/1', 'n', 1, toDateTime('2026-03-10 00:00:00', 'UTC'), now()`,
	`INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, version)
SELECT 'r1', 'ws', 'app-1', 'schedule', 'succeeded', toDateTime('2026-03-31 05:00:00', 'UTC'), toDateTime('2026-03-31 05:10:00', 'UTC'), 1`,
	`INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)
SELECT 'ws', 'app-1', 'transactions', 'c', toDateTime('2026-03-31 05:10:00', 'UTC'), 1`,
	`INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)
SELECT 'ws', 'a.myshopify.com', '', 1, 'r', now(), 1`,
}

// inline replaces each ? with its argument as a SQL literal, as the driver's positional binding
// does. The store's queries contain no other question mark.
func inline(t testing.TB, q string, args ...any) string {
	t.Helper()
	parts := strings.Split(q, "?")
	if len(parts) != len(args)+1 {
		t.Fatalf("%d placeholders, %d arguments in %s", len(parts)-1, len(args), q)
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(args) {
			b.WriteString(literal(t, args[i]))
		}
	}
	return b.String()
}

func literal(t testing.TB, v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `'`, `\'`) + "'"
	case int, int64, uint64:
		return fmt.Sprint(v)
	case clickhouse.GroupSet:
		vals := make([]string, len(v.Value))
		for i, x := range v.Value {
			vals[i] = literal(t, x)
		}
		return "(" + strings.Join(vals, ", ") + ")"
	case []string: // an array, as the driver binds a slice
		vals := make([]string, len(v))
		for i, x := range v {
			vals[i] = literal(t, x)
		}
		return "[" + strings.Join(vals, ", ") + "]"
	case []clickhouse.GroupSet:
		tuples := make([]string, len(v))
		for i, g := range v {
			tuples[i] = literal(t, g)
		}
		return strings.Join(tuples, ", ")
	}
	t.Fatalf("no literal for %T", v)
	return ""
}
