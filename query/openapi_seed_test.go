package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// platformFixture is synced platform data for the reporting endpoints, written straight into the
// tables the sync fills (columns of migrations 0003 and 0008). Two apps share the shop domain
// shared.example, so a lookup by that domain is ambiguous (409).
type platformFixture struct {
	workspaceID string
	today       time.Time
	// alpha is a paying customer of app-1 with transactions, usage and lifecycle history.
	alphaID, alphaDomain string
	sharedDomain         string
}

func (f platformFixture) day(offset int) time.Time { return f.today.AddDate(0, 0, offset) }

// seedPlatform writes the fixture. Money follows docs/METRICS.md 3.7 (alpha, bravo, foxtrot, golf).
func seedPlatform(t *testing.T, conn driver.Conn, workspaceID string, now time.Time) platformFixture {
	t.Helper()
	ctx := testenv.Ctx(t)
	f := platformFixture{workspaceID: workspaceID, today: now.UTC().Truncate(24 * time.Hour),
		alphaDomain: "alpha.example", sharedDomain: "shared.example"}
	f.alphaID = schemas.CustomerPublicID("app-1", "c-alpha")
	ws, ver := workspaceID, uint64(now.UnixMicro())
	at := func(offset int, hour int) time.Time { return f.day(offset).Add(time.Duration(hour) * time.Hour) }
	tp := func(t time.Time) *time.Time { return &t }
	i64 := func(n int64) *int64 { return &n }

	type customer struct {
		app, id, domain, name, status, country, plan string
		tags                                         []string
		excluded                                     uint8
		installed                                    int
	}
	customers := []customer{
		{"app-1", "c-alpha", f.alphaDomain, "Alpha", "installed", "US", "Pro", []string{"usage_billing"}, 0, -200},
		{"app-1", "c-bravo", f.sharedDomain, "Bravo", "installed", "", "Annual", []string{"annual_plan"}, 0, -150},
		{"app-1", "c-foxtrot", "foxtrot.example", "Foxtrot", "installed", "DE", "Basic", nil, 0, -120},
		{"app-1", "c-golf", "golf.example", "Golf", "installed", "", "Pro", nil, 1, -90},
		{"app-1", "c-hotel", "hotel.example", "Hotel", "uninstalled", "", "", nil, 0, -80},
		{"app-2", "c-shared2", f.sharedDomain, "Bravo (app 2)", "installed", "", "", nil, 0, -40},
	}
	insert(t, ctx, conn, `INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_id, shop_domain, shop_name,
status, country, plan, tags, store_classification, report_excluded, first_installed_at, last_event_at, version, public_id)`,
		func(add func(...any)) {
			for _, c := range customers {
				add(ws, c.app, c.id, "shop-"+c.id, c.domain, c.name, c.status, c.country, c.plan, c.tags, "production", c.excluded,
					tp(at(c.installed, 9)), tp(at(-1, 9)), ver, schemas.CustomerPublicID(c.app, c.id))
			}
		})
	insert(t, ctx, conn, `INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)`,
		func(add func(...any)) { add(ws, "golf.example", "", uint8(1), "own development store", now.UTC(), ver) })

	type charge struct {
		app, id, customer, name string
		amount                  int64
		currency, interval      string
		activated               int
		test                    uint8
	}
	charges := []charge{
		{"app-1", "ch-alpha", "c-alpha", "Pro", 4900, "USD", "every_30_days", -200, 0},
		{"app-1", "ch-bravo", "c-bravo", "Annual", 99000, "USD", "annual", -150, 0},
		{"app-1", "ch-foxtrot", "c-foxtrot", "Basic", 3900, "EUR", "every_30_days", -120, 0},
		{"app-1", "ch-golf", "c-golf", "Pro", 9900, "USD", "every_30_days", -90, 0},
		{"app-1", "ch-hotel", "c-hotel", "Pro", 4900, "USD", "every_30_days", -80, 1},
	}
	insert(t, ctx, conn, `INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents,
currency, billing_interval, status, test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at, billing_on, version)`,
		func(add func(...any)) {
			for _, c := range charges {
				add(ws, c.app, c.id, c.customer, "subscription", c.name, c.amount, c.currency, c.interval, "active", c.test,
					uint16(0), (*int64)(nil), tp(at(c.activated, 8)), tp(at(c.activated, 9)), (*time.Time)(nil), (*time.Time)(nil), ver)
			}
		})

	insert(t, ctx, conn, `INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain,
occurred_at, charge_id, charge_name, amount_cents, currency, reason, description, synced_at)`,
		func(add func(...any)) {
			for _, c := range customers {
				add(ws, c.app, "install-"+c.id, "RELATIONSHIP_INSTALLED", c.id, c.domain, at(c.installed, 9), "", "", (*int64)(nil),
					"", "", "", now.UTC())
			}
			for _, c := range charges {
				add(ws, c.app, "activate-"+c.id, "SUBSCRIPTION_CHARGE_ACTIVATED", c.customer, "", at(c.activated, 9), c.id, c.name,
					i64(c.amount), c.currency, "", "", now.UTC())
			}
			add(ws, "app-1", "uninstall-c-hotel", "RELATIONSHIP_UNINSTALLED", "c-hotel", "hotel.example", at(-3, 9), "", "",
				(*int64)(nil), "", "", "", now.UTC())
		})

	type txn struct {
		id, customer, typ        string
		offset                   int
		currency                 string
		gross, fee, proc, net    int64
		charge, interval, domain string
	}
	txns := []txn{
		{"t-alpha-sub", "c-alpha", "subscription", -10, "USD", 4900, 735, 142, 4023, "ch-alpha", "every_30_days", f.alphaDomain},
		{"t-alpha-usage", "c-alpha", "usage", -10, "USD", 1200, 180, 35, 985, "", "", f.alphaDomain},
		{"t-alpha-refund", "c-alpha", "refund", -8, "USD", -1000, -150, 0, -850, "", "", f.alphaDomain},
		{"t-bravo-sub", "c-bravo", "subscription", -131, "USD", 99000, 14850, 2871, 81279, "ch-bravo", "annual", f.sharedDomain},
		{"t-foxtrot-sub", "c-foxtrot", "subscription", -5, "EUR", 3900, 585, 113, 3202, "ch-foxtrot", "every_30_days", "foxtrot.example"},
		{"t-golf-sub", "c-golf", "subscription", -4, "USD", 9900, 1485, 287, 8128, "ch-golf", "every_30_days", "golf.example"},
	}
	insert(t, ctx, conn, `INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain,
charge_id, created_at, currency, gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)`,
		func(add func(...any)) {
			for _, x := range txns {
				add(ws, "app-1", x.id, x.typ, x.customer, x.domain, x.charge, at(x.offset, 12), x.currency, x.gross, x.fee, i64(x.proc),
					x.net, x.interval, now.UTC())
			}
		})

	// The landing consumer's customer days (migration 0024), as it would write them.
	if err := schemas.AllCustomerDays(ctx, conn, 1, ws); err != nil {
		t.Fatal(err)
	}
	insert(t, ctx, conn, `INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id,
description, amount_cents, currency, occurred_at, synced_at)`,
		func(add func(...any)) {
			add(ws, "app-1", "u-1", "c-alpha", "ch-alpha", "orders", int64(450), "USD", at(-20, 10), now.UTC())
			add(ws, "app-1", "u-2", "c-alpha", "ch-alpha", "orders", int64(700), "USD", at(-6, 10), now.UTC())
		})
	// And its observed usage days (migration 0026).
	if err := schemas.AllObservedDays(ctx, conn, 1, ws); err != nil {
		t.Fatal(err)
	}
	insert(t, ctx, conn, `INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)`,
		func(add func(...any)) {
			add(ws, "app-1", "ue-1", "c-alpha", "orders_synced", int64(3), at(-2, 10), now.UTC())
			add(ws, "app-1", "ue-2", "c-alpha", "orders_synced", int64(2), at(-1, 10), now.UTC())
			add(ws, "app-1", "ue-3", "c-alpha", "report_exported", int64(1), at(-1, 11), now.UTC())
		})

	insert(t, ctx, conn, `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, events_count,
transactions_count, coverage_from, coverage_through, truncated, error, version)`,
		func(add func(...any)) {
			for _, app := range []string{"app-1", "app-2"} {
				add("run-"+app, ws, app, "schedule", "succeeded", now.UTC().Add(-time.Hour), tp(now.UTC().Add(-50*time.Minute)),
					uint64(10), uint64(6), tp(at(-400, 0)), tp(now.UTC().Add(-50*time.Minute)), uint8(0), "", ver)
			}
		})
	insert(t, ctx, conn, `INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)`,
		func(add func(...any)) {
			for _, app := range []string{"app-1", "app-2"} {
				for _, s := range []string{"transactions", "lifecycle_events", "usage_charges"} {
					add(ws, app, s, "cursor-"+s, now.UTC().Add(-50*time.Minute), ver)
					add(ws, app, s+":start", "origin", at(-400, 0), ver)
				}
			}
		})
	return f
}

// insert writes rows with one batch; an explicit column list, as ClickHouse 18.16 needs.
func insert(t *testing.T, ctx context.Context, conn driver.Conn, query string, rows func(add func(...any))) {
	t.Helper()
	b, err := conn.PrepareBatch(ctx, query)
	if err != nil {
		t.Fatalf("prepare %s: %v", query, err)
	}
	rows(func(v ...any) {
		if err := b.Append(v...); err != nil {
			t.Fatalf("append %s: %v", query, err)
		}
	})
	if err := b.Send(); err != nil {
		t.Fatalf("send %s: %v", query, err)
	}
}
