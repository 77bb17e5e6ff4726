package processors

import (
	"fmt"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// daysSale is a transaction of the customer-days scenario.
func daysSale(ws, id, shop, typ, currency string, at time.Time, gross, net int64, synced time.Time) schemas.PlatformRecord {
	return schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: scenarioApp, SyncedAt: synced,
		Transaction: &schemas.Transaction{TransactionID: id, Type: typ, CustomerID: shop, ShopDomain: shopDomainOf(shop),
			CreatedAt: at, Currency: currency, GrossCents: gross, NetCents: net}}
}

// The customer days follow what lands: every day of every customer a batch names is recomputed
// from the de-duplicated transactions, so a re-synced sale (same ID, later synced_at) replaces its
// day's row rather than adding to it, and a new sale on a day already written adds once. The usage
// days (migration 0028) follow them.
func TestCustomerDaysFollowLanding(t *testing.T) {
	e := setup(t)
	startPlatformLanding(t, e)
	const ws = "ws-days"
	day := func(d int, h int) time.Time {
		return scenarioStart.Truncate(24*time.Hour).AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
	}
	synced := scenarioStart.Add(300 * sday)
	var first []schemas.PlatformRecord
	for i := range 6 {
		first = append(first, daysSale(ws, fmt.Sprintf("gid://partners/AppUsageSale/%d", i), shopAlpha, "usage", "USD", day(i%3, 1+i), 100, 80, synced))
	}
	first = append(first,
		daysSale(ws, "gid://partners/AppUsageSale/eur", shopAlpha, "usage", "EUR", day(0, 5), 300, 250, synced),
		daysSale(ws, "gid://partners/AppSubscriptionSale/1", shopAlpha, "subscription", "USD", day(1, 3), 999, 850, synced),
		daysSale(ws, "gid://partners/AppSaleAdjustment/1", shopAlpha, "refund", "USD", day(2, 23), -500, -425, synced),
		daysSale(ws, "gid://partners/AppUsageSale/late", shopLate, "usage", "USD", day(0, 0), 700, 600, synced))
	e.produceRecords(t, first)
	// Waiting for every transaction, not just some: the consumer may land a produce in more
	// than one batch, and each batch's days agree with what has landed so far.
	agree := func(what string, want uint64) {
		t.Helper()
		eventually(t, what, func() bool {
			var landed, n uint64
			ctx := testenv.Ctx(t)
			if err := e.ch.QueryRow(ctx, "SELECT count() FROM platform_transactions FINAL WHERE workspace_id = ?", ws).Scan(&landed); err != nil {
				t.Fatal(err)
			}
			if err := e.ch.QueryRow(ctx, schemas.CustomerDaysMismatches, ws, ws).Scan(&n); err != nil {
				t.Fatal(err)
			}
			var usage uint64 // the usage days (migration 0028) follow the customer days
			if err := e.ch.QueryRow(ctx, schemas.UsageDaysMismatches, ws, ws).Scan(&usage); err != nil {
				t.Fatal(err)
			}
			return landed == want && n == 0 && usage == 0
		})
	}
	agree("the first batch's days", uint64(len(first)))
	usage := func() (sales uint64, gross int64) {
		t.Helper()
		if err := e.ch.QueryRow(testenv.Ctx(t), `SELECT sum(usage_sales), sum(usage_gross_cents) FROM reporting_customer_days FINAL
WHERE workspace_id = ? AND public_id = ? AND currency = 'USD' AND day = ?`, ws, schemas.CustomerPublicID(scenarioApp, shopAlpha),
			day(0, 0).Unix()/86400).Scan(&sales, &gross); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s, g := usage(); s != 2 || g != 200 {
		t.Fatalf("alpha's first day: %d usage sales, %d gross; want 2 and 200", s, g)
	}

	// The whole first batch again, synced later, with one new sale on alpha's first day and a first
	// usage sale on its second.
	var again []schemas.PlatformRecord
	for _, r := range first {
		r.SyncedAt = synced.Add(time.Hour)
		again = append(again, r)
	}
	again = append(again, daysSale(ws, "gid://partners/AppUsageSale/new", shopAlpha, "usage", "USD", day(0, 12), 40, 30, synced.Add(time.Hour)),
		// A day that held only a subscription sale gains a usage sale: its new version enters the
		// usage days (migration 0028), which held no row of it.
		daysSale(ws, "gid://partners/AppUsageSale/second-day", shopAlpha, "usage", "USD", day(1, 5), 60, 50, synced.Add(time.Hour)))
	e.produceRecords(t, again)
	eventually(t, "the new sale counted once", func() bool { s, g := usage(); return s == 3 && g == 240 })
	agree("the re-synced days", uint64(len(again)))
}

// daysUsageRecord is a usage record (USAGE_CHARGE_APPLIED) of the observed-days scenario.
func daysUsageRecord(ws, id, shop, currency string, at time.Time, amount int64, test bool, synced time.Time) schemas.PlatformRecord {
	var domain string
	if shop != "" {
		domain = shopDomainOf(shop)
	}
	return schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: scenarioApp, SyncedAt: synced,
		LifecycleEvent: &schemas.LifecycleEvent{EventKey: "usage-" + id, Type: usageChargeApplied, CustomerID: shop, ShopDomain: domain,
			OccurredAt: at, ChargeID: id, ChargeType: "AppUsageRecord", AmountCents: &amount,
			Currency: currency, Test: test}}
}

// The observed usage days (migration 0026) follow what lands like the customer days: a re-synced
// usage record replaces its day's row rather than adding to it, a new record on a day already
// written adds once, a test record never counts, and a record without a customer is counted under
// its app's customer "".
func TestObservedDaysFollowLanding(t *testing.T) {
	e := setup(t)
	startPlatformLanding(t, e)
	const ws = "ws-observed-days"
	day := func(d int, h int) time.Time {
		return scenarioStart.Truncate(24*time.Hour).AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
	}
	synced := scenarioStart.Add(300 * sday)
	var first []schemas.PlatformRecord
	for i := range 6 {
		first = append(first, daysUsageRecord(ws, fmt.Sprintf("gid://partners/AppUsageRecord/%d", i), shopAlpha, "USD", day(i%3, 1+i), 100, false, synced))
	}
	first = append(first,
		daysUsageRecord(ws, "gid://partners/AppUsageRecord/eur", shopAlpha, "EUR", day(0, 5), 300, false, synced),
		daysUsageRecord(ws, "gid://partners/AppUsageRecord/test", shopAlpha, "USD", day(0, 6), 5000, true, synced),
		daysUsageRecord(ws, "gid://partners/AppUsageRecord/late", shopLate, "USD", day(0, 0), 700, false, synced),
		daysUsageRecord(ws, "gid://partners/AppUsageRecord/nobody", "", "USD", day(1, 0), 90, false, synced))
	e.produceRecords(t, first)
	agree := func(what string, want uint64) {
		t.Helper()
		eventually(t, what, func() bool {
			var landed, n uint64
			ctx := testenv.Ctx(t)
			if err := e.ch.QueryRow(ctx, "SELECT count() FROM platform_usage_charges FINAL WHERE workspace_id = ?", ws).Scan(&landed); err != nil {
				t.Fatal(err)
			}
			if err := e.ch.QueryRow(ctx, schemas.ObservedDaysMismatches, ws, ws).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return landed == want && n == 0
		})
	}
	agree("the first batch's days", uint64(len(first)))
	observed := func(shop string, d int) (records uint64, amount int64) {
		t.Helper()
		if err := e.ch.QueryRow(testenv.Ctx(t), `SELECT sum(records), sum(amount_cents) FROM reporting_observed_days FINAL
WHERE workspace_id = ? AND public_id = ? AND currency = 'USD' AND day = ?`, ws, schemas.CustomerPublicID(scenarioApp, shop),
			day(d, 0).Unix()/86400).Scan(&records, &amount); err != nil {
			t.Fatal(err)
		}
		return
	}
	if r, a := observed(shopAlpha, 0); r != 2 || a != 200 {
		t.Fatalf("alpha's first day: %d records, %d cents; want 2 and 200 (the test record left out)", r, a)
	}
	if r, a := observed("", 1); r != 1 || a != 90 {
		t.Fatalf("the record without a customer: %d records, %d cents; want 1 and 90", r, a)
	}

	// The whole first batch again, synced later, with one new record on alpha's first day.
	var again []schemas.PlatformRecord
	for _, r := range first {
		r.SyncedAt = synced.Add(time.Hour)
		again = append(again, r)
	}
	again = append(again, daysUsageRecord(ws, "gid://partners/AppUsageRecord/new", shopAlpha, "USD", day(0, 12), 40, false, synced.Add(time.Hour)))
	e.produceRecords(t, again)
	eventually(t, "the new record counted once", func() bool { r, a := observed(shopAlpha, 0); return r == 3 && a == 240 })
	agree("the re-synced days", uint64(len(again)))
}
