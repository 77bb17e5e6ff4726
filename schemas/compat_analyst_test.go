package schemas

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

// The analyst views (migration 0010) are checked on both engines with the same fixture and the same
// checks: every base row is written twice with two versions (or twice identically, as a redelivery
// does), and each check is one row with one column `ok` that is 1 when the view shows each entity
// once, with its latest values.

var analystViewRe = regexp.MustCompile(`(?i)CREATE VIEW IF NOT EXISTS (analyst_[a-z_]+)`)

// analystViews lists the views the migrations create, in creation order.
func analystViews(t testing.TB) []string {
	t.Helper()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		for _, st := range m.Statements {
			if v := analystViewRe.FindStringSubmatch(st); v != nil {
				out = append(out, v[1])
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no analyst_ views in the migrations")
	}
	return out
}

func migrationStatements(t testing.TB) []string {
	t.Helper()
	out, err := MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// analystExamples are the SQL blocks of the "Example queries" section of docs/ANALYSTS.md: they must
// run on both engines, as the analyst user.
func analystExamples(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "ANALYSTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Example queries\n")
	if !ok {
		t.Fatal("docs/ANALYSTS.md has no section ## Example queries")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, block := range strings.Split(section, "```sql\n")[1:] {
		q, _, _ := strings.Cut(block, "```")
		out = append(out, strings.TrimSuffix(strings.TrimSpace(q), ";"))
	}
	if len(out) < 4 {
		t.Fatalf("docs/ANALYSTS.md: %d example queries, want at least 4", len(out))
	}
	return out
}

// analystFixture writes base rows with INSERT … SELECT (which 18.16 runs through Exec, unlike
// INSERT … VALUES). Day d is 2026-03-10; versions 1 and 2 of each row differ.
var analystFixture = []string{
	// Workspace ws renamed in version 2; a deleted workspace; app-1 and a deleted app.
	`INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at, version)
SELECT 'ws', 'acme', 'Acme', 'trialing', ['app-1'], toDateTime('2026-01-01 00:00:00', 'UTC'), toDateTime('2026-01-01 00:00:00', 'UTC'), 1`,
	`INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at, version)
SELECT 'ws', 'acme', 'Acme Inc', 'active', ['app-1'], toDateTime('2026-01-01 00:00:00', 'UTC'), toDateTime('2026-02-01 00:00:00', 'UTC'), 2`,
	`INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at, version, deleted)
SELECT 'ws-gone', 'gone', 'Gone', 'canceled', [], toDateTime('2026-01-01 00:00:00', 'UTC'), toDateTime('2026-01-01 00:00:00', 'UTC'), 1, 1`,
	`INSERT INTO apps (app_id, platform_app_id, name, created_at, updated_at, version)
SELECT 'app-1', 'gid://app/1', 'App one', toDateTime('2026-01-01 00:00:00', 'UTC'), toDateTime('2026-01-01 00:00:00', 'UTC'), 1`,
	`INSERT INTO apps (app_id, platform_app_id, name, created_at, updated_at, version, deleted)
SELECT 'app-9', 'gid://app/9', 'Removed', toDateTime('2026-01-01 00:00:00', 'UTC'), toDateTime('2026-01-01 00:00:00', 'UTC'), 1, 1`,
	// c-1 renamed and uninstalled in version 2; c-2 a second customer, excluded in every app.
	`INSERT INTO platform_customers (workspace_id, app_id, customer_id, public_id, shop_id, shop_domain, shop_name, status, country, plan,
tags, store_classification, report_excluded, first_installed_at, last_event_at, version)
SELECT 'ws', 'app-1', 'c-1', 'cus_1', 's-1', 'one.example', 'Old name', 'installed', 'US', 'Pro', ['annual_plan'], 'production', 0,
toDateTime('2026-03-01 10:00:00', 'UTC'), toDateTime('2026-03-05 10:00:00', 'UTC'), 1`,
	`INSERT INTO platform_customers (workspace_id, app_id, customer_id, public_id, shop_id, shop_domain, shop_name, status, country, plan,
tags, store_classification, report_excluded, first_installed_at, last_event_at, version)
SELECT 'ws', 'app-1', 'c-1', 'cus_1', 's-1', 'one.example', 'New name', 'uninstalled', 'US', 'Pro', ['annual_plan'], 'production', 0,
toDateTime('2026-03-01 10:00:00', 'UTC'), toDateTime('2026-03-05 10:00:00', 'UTC'), 2`,
	`INSERT INTO platform_customers (workspace_id, app_id, customer_id, public_id, shop_id, shop_domain, shop_name, status, country, plan,
tags, store_classification, report_excluded, first_installed_at, last_event_at, version)
SELECT 'ws', 'app-1', 'c-2', 'cus_2', 's-2', 'two.example', 'Two', 'installed', '', '', [], 'unknown', 0, NULL, NULL, 1`,
	// one.example: excluded, then lifted (latest wins: not excluded). two.example: excluded for every app.
	`INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)
SELECT 'ws', 'one.example', 'app-1', 1, 'staff store', toDateTime('2026-03-02 00:00:00', 'UTC'), 1`,
	`INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)
SELECT 'ws', 'one.example', 'app-1', 0, 'lifted', toDateTime('2026-03-03 00:00:00', 'UTC'), 2`,
	`INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)
SELECT 'ws', 'two.example', '', 1, 'partner store', toDateTime('2026-03-03 00:00:00', 'UTC'), 1`,
	// A lifecycle event before the install time stamp and one after the last event: first/last seen.
	`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at, charge_id,
charge_name, amount_cents, currency, reason, description, synced_at)
SELECT 'ws', 'app-1', 'e-1', 'RELATIONSHIP_INSTALLED', 'c-1', 'one.example', toDateTime('2026-02-28 09:00:00', 'UTC'), '', '', NULL, '', '',
'v1', toDateTime('2026-03-10 00:00:01', 'UTC')`,
	`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at, charge_id,
charge_name, amount_cents, currency, reason, description, synced_at)
SELECT 'ws', 'app-1', 'e-1', 'RELATIONSHIP_INSTALLED', 'c-1', 'one.example', toDateTime('2026-02-28 09:00:00', 'UTC'), '', '', NULL, '', '',
'v2', toDateTime('2026-03-10 00:00:02', 'UTC')`,
	`INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at, charge_id,
charge_name, amount_cents, currency, reason, description, synced_at)
SELECT 'ws', 'app-1', 'e-2', 'RELATIONSHIP_UNINSTALLED', 'c-1', 'one.example', toDateTime('2026-03-09 09:00:00', 'UTC'), '', '', NULL, '', '',
'', toDateTime('2026-03-10 00:00:02', 'UTC')`,
	`INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status,
test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at, billing_on, version)
SELECT 'ws', 'app-1', 'ch-1', 'c-1', 'subscription', 'Pro', 4900, 'USD', 'every_30_days', 'pending', 0, 0, NULL,
toDateTime('2026-03-01 10:00:00', 'UTC'), NULL, NULL, NULL, 1`,
	`INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency, billing_interval, status,
test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at, billing_on, version)
SELECT 'ws', 'app-1', 'ch-1', 'c-1', 'subscription', 'Pro', 4900, 'USD', 'every_30_days', 'active', 0, 0, NULL,
toDateTime('2026-03-01 10:00:00', 'UTC'), toDateTime('2026-03-01 10:05:00', 'UTC'), NULL, NULL, 2`,
	// t-1 re-synced with corrected amounts; t-2 a refund the same day; t-3 another currency.
	`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id, created_at, currency,
gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', 'app-1', 't-1', 'subscription', 'c-1', 'one.example', 'ch-1', toDateTime('2026-03-10 12:00:00', 'UTC'), 'USD',
4000, 600, NULL, 3400, 'every_30_days', toDateTime('2026-03-10 13:00:00', 'UTC')`,
	`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id, created_at, currency,
gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', 'app-1', 't-1', 'subscription', 'c-1', 'one.example', 'ch-1', toDateTime('2026-03-10 12:00:00', 'UTC'), 'USD',
4900, 735, 142, 4023, 'every_30_days', toDateTime('2026-03-11 13:00:00', 'UTC')`,
	`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id, created_at, currency,
gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', 'app-1', 't-2', 'refund', 'c-1', 'one.example', '', toDateTime('2026-03-10 18:00:00', 'UTC'), 'USD',
-1000, -150, 0, -850, '', toDateTime('2026-03-11 13:00:00', 'UTC')`,
	`INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain, charge_id, created_at, currency,
gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)
SELECT 'ws', 'app-1', 't-3', 'subscription', 'c-2', 'two.example', '', toDateTime('2026-03-10 08:00:00', 'UTC'), 'EUR',
3900, 585, 113, 3202, 'every_30_days', toDateTime('2026-03-11 13:00:00', 'UTC')`,
	`INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, description, amount_cents, currency,
occurred_at, synced_at)
SELECT 'ws', 'app-1', 'u-1', 'c-1', 'ch-1', 'orders', 450, 'USD', toDateTime('2026-03-04 10:00:00', 'UTC'), toDateTime('2026-03-10 00:00:01', 'UTC')`,
	`INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, description, amount_cents, currency,
occurred_at, synced_at)
SELECT 'ws', 'app-1', 'u-1', 'c-1', 'ch-1', 'orders', 450, 'USD', toDateTime('2026-03-04 10:00:00', 'UTC'), toDateTime('2026-03-10 00:00:02', 'UTC')`,
	`INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)
SELECT 'ws', 'app-1', 'ue-1', 'c-1', 'orders_synced', 3, toDateTime('2026-03-10 09:00:00', 'UTC'), toDateTime('2026-03-10 09:00:01', 'UTC')`,
	`INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)
SELECT 'ws', 'app-1', 'ue-1', 'c-1', 'orders_synced', 3, toDateTime('2026-03-10 09:00:00', 'UTC'), toDateTime('2026-03-10 09:05:00', 'UTC')`,
	`INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)
SELECT 'ws', 'app-1', 'ue-2', 'c-1', 'orders_synced', 2, toDateTime('2026-03-10 11:00:00', 'UTC'), toDateTime('2026-03-10 11:00:01', 'UTC')`,
	`INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, events_count, transactions_count,
coverage_from, coverage_through, truncated, error, version)
SELECT 'run-1', 'ws', 'app-1', 'schedule', 'running', toDateTime('2026-03-11 13:00:00', 'UTC'), NULL, 0, 0, NULL, NULL, 0, '', 1`,
	`INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, events_count, transactions_count,
coverage_from, coverage_through, truncated, error, version)
SELECT 'run-1', 'ws', 'app-1', 'schedule', 'succeeded', toDateTime('2026-03-11 13:00:00', 'UTC'), toDateTime('2026-03-11 13:01:00', 'UTC'),
3, 3, toDateTime('2025-01-01 00:00:00', 'UTC'), toDateTime('2026-03-11 13:00:00', 'UTC'), 0, '', 2`,
	// b-1 delivered twice (acquisitions_mv sees both inserts), b-2 a second page view of the browser.
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at, first_utm_source,
first_tracker_ref)
SELECT 'b-1', 'src', 'ws', 'app-1', 'acq-1', 'page_view', toDateTime('2026-03-10 10:00:00', 'UTC'), toDateTime('2026-03-10 10:00:01', 'UTC'),
'newsletter', 'partner-7'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at, first_utm_source,
first_tracker_ref)
SELECT 'b-1', 'src', 'ws', 'app-1', 'acq-1', 'page_view', toDateTime('2026-03-10 10:00:00', 'UTC'), toDateTime('2026-03-10 10:00:09', 'UTC'),
'newsletter', 'partner-7'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at, first_utm_source,
first_tracker_ref)
SELECT 'b-2', 'src', 'ws', 'app-1', 'acq-1', 'page_view', toDateTime('2026-03-10 10:05:00', 'UTC'), toDateTime('2026-03-10 10:05:01', 'UTC'),
'newsletter', 'partner-7'`,
	// Daily MRR (migration 0022): generation 1 superseded by generation 2, whose span of 3 days and
	// movement the views show; generation 3's rows are written but not recorded yet.
	`INSERT INTO customer_mrr_spans (workspace_id, app_id, generation, public_id, customer_id, shop_domain, currency, from_date, to_date,
mrr_cents, subscription_mrr_cents, usage_mrr_cents, paying, excluded, computed_at)
SELECT 'ws', 'app-1', g, 'cus_1', 'c-1', 'one.example', 'USD', toDate('2026-03-08'), toDate('2026-03-10'), 4900 + g, 4900 + g, 0, 1, 0,
toDateTime('2026-03-10 12:00:00', 'UTC') FROM (SELECT arrayJoin([1, 2, 3]) AS g)`,
	`INSERT INTO customer_mrr_movements (workspace_id, app_id, generation, public_id, customer_id, shop_domain, currency, date, kind,
movement_cents, subscription_mrr_before_cents, subscription_mrr_after_cents, excluded, computed_at)
SELECT 'ws', 'app-1', g, 'cus_1', 'c-1', 'one.example', 'USD', toDate('2026-03-08'), 'new', 4900 + g, 0, 4900 + g, 0,
toDateTime('2026-03-10 12:00:00', 'UTC') FROM (SELECT arrayJoin([1, 2, 3]) AS g)`,
	`INSERT INTO customer_mrr_generations (workspace_id, app_id, generation, computed_at, through_date, inputs_version, customers, spans, movements)
SELECT 'ws', 'app-1', arrayJoin([1, 2]), toDateTime('2026-03-10 12:00:00', 'UTC'), toDate('2026-03-10'), 'v', 1, 1, 1`,
	// f-1 first written unattributed, then attributed by its own acquisition ID (higher version).
	`INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, acquisition_source_id, acquisition_id,
acquisition_resolved_by, shop_domain, amount_cents, currency, version)
SELECT 'ws', 'src', 'app-1', 'f-1', 'install', toDateTime('2026-03-10 10:10:00', 'UTC'), '', '', '', 'one.example', NULL, '', 0`,
	`INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, acquisition_source_id, acquisition_id,
acquisition_resolved_by, shop_domain, amount_cents, currency, version)
SELECT 'ws', 'src', 'app-1', 'f-1', 'install', toDateTime('2026-03-10 10:10:00', 'UTC'), 'src', 'acq-1', 'event', 'one.example', NULL, '',
18446744073709551615`,
}

// analystCheck is one assertion over the views: a query of one row whose column ok is 1.
type analystCheck struct{ name, query string }

var analystChecks = []analystCheck{
	{"workspaces once each, latest version, deleted ones left out", `SELECT count() = 1 AND any(slug) = 'acme' AND any(name) = 'Acme Inc'
AND any(subscription_status) = 'active' AND any(selected_app_ids) = ['app-1'] AS ok FROM analyst_workspaces`},
	{"apps without deleted ones", `SELECT count() = 1 AND any(app_id) = 'app-1' AS ok FROM analyst_apps`},
	{"customers once each, latest version", `SELECT count() = 2 AND
countIf(customer_id = 'c-1' AND public_id = 'cus_1' AND shop_name = 'New name' AND status = 'uninstalled') = 1 AS ok FROM analyst_customers`},
	{"customers excluded flag follows the latest rule, per app or for every app", `SELECT
sumIf(excluded, customer_id = 'c-1') = 0 AND sumIf(excluded, customer_id = 'c-2') = 1 AS ok FROM analyst_customers`},
	{"customers first and last seen span install and lifecycle events", `SELECT
countIf(customer_id = 'c-1' AND first_seen_at = toDateTime('2026-02-28 09:00:00', 'UTC')
  AND last_seen_at = toDateTime('2026-03-09 09:00:00', 'UTC')) = 1
AND countIf(customer_id = 'c-2' AND isNull(first_seen_at) AND isNull(last_seen_at)) = 1 AS ok FROM analyst_customers`},
	{"charges once, latest status", `SELECT count() = 1 AND any(status) = 'active' AND any(kind) = 'subscription'
AND any(billing_interval) = 'every_30_days' AND isNotNull(any(activated_at)) AS ok FROM analyst_charges`},
	{"transactions once each, latest amounts", `SELECT count() = 3
AND sumIf(gross_cents, transaction_id = 't-1') = 4900 AND sumIf(net_cents, transaction_id = 't-1') = 4023
AND sumIf(fees_cents, transaction_id = 't-1') = 877 AND sumIf(assumeNotNull(processing_fee_cents), transaction_id = 't-1') = 142
AND countIf(transaction_id = 't-2' AND type = 'refund' AND gross_cents = -1000) = 1 AS ok FROM analyst_transactions`},
	{"lifecycle events once each, latest version", `SELECT count() = 2 AND countIf(event_key = 'e-1' AND description = 'v2') = 1 AS ok
FROM analyst_lifecycle_events`},
	{"usage charges once", `SELECT count() = 1 AND sum(amount_cents) = 450 AS ok FROM analyst_usage_charges`},
	{"usage events once each", `SELECT count() = 2 AND sum(quantity) = 5
AND maxIf(received_at, event_id = 'ue-1') = toDateTime('2026-03-10 09:05:00', 'UTC') AS ok FROM analyst_usage_events`},
	{"sync runs once, latest status", `SELECT count() = 1 AND any(status) = 'succeeded' AND any(trigger) = 'schedule' AS ok FROM analyst_sync_runs`},
	{"acquisitions once, distinct page views, first touch", `SELECT count() = 1 AND any(page_view_count) = 2 AND any(event_count) = 2
AND any(utm_source) = 'newsletter' AND any(tracker_ref) = 'partner-7' AND any(first_seen_at) = toDateTime('2026-03-10 10:00:00', 'UTC')
AS ok FROM analyst_acquisitions`},
	{"funnel events once, best resolution", `SELECT count() = 1 AND any(acquisition_resolved_by) = 'event' AND any(acquisition_id) = 'acq-1'
AND any(name) = 'install' AS ok FROM analyst_funnel_events`},
	{"daily revenue per date, currency and type, from de-duplicated transactions", `SELECT count() = 3
AND sumIf(gross_cents, currency = 'USD' AND type = 'subscription') = 4900
AND sumIf(fees_cents, currency = 'USD' AND type = 'subscription') = 877
AND sumIf(transaction_count, currency = 'USD') = 2 AND sumIf(net_cents, currency = 'USD') = 3173
AND sumIf(gross_cents, currency = 'EUR') = 3900 AND min(date) = toDate('2026-03-10') AS ok FROM analyst_daily_revenue`},
	{"daily MRR: a span expanded into its days, the current generation only", `SELECT count() = 3 AND min(date) = toDate('2026-03-08')
AND max(date) = toDate('2026-03-10') AND min(mrr_cents) = 4902 AND max(mrr_cents) = 4902 AS ok FROM analyst_customer_mrr_daily`},
	{"MRR movements of the current generation only", `SELECT count() = 1 AND any(kind) = 'new' AND any(movement_cents) = 4902
AS ok FROM analyst_mrr_movements`},
	{"daily usage from de-duplicated events", `SELECT count() = 1 AND any(event_count) = 2 AND any(total_quantity) = 5 AND any(customers) = 1
AS ok FROM analyst_daily_usage`},
}

// TestAnalystViewsRunOnCurrentClickHouse creates the views on the current ClickHouse engine, reads
// every one of them, and runs the de-duplication checks there too (18.16: analyst_views_test.go).
func TestAnalystViewsRunOnCurrentClickHouse(t *testing.T) {
	statements := append(migrationStatements(t), analystFixture...)
	for _, v := range analystViews(t) {
		statements = append(statements, "SELECT * FROM "+v)
	}
	for _, c := range analystChecks {
		statements = append(statements, "SELECT throwIf(ok != 1) FROM ("+c.query+")")
	}
	statements = append(statements, analystExamples(t)...)
	// A check that does not hold proves that a failing check is reported.
	const control = "SELECT throwIf(ok != 1) FROM (SELECT toUInt8(0) AS ok, 'analyst_control' AS marker)"
	statements = append(statements, control)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "analyst_control") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
