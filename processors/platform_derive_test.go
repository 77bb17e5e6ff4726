package processors

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The derivation end to end: records go through Kafka and the land-platform-records loop, and
// the derived tables are read back with FINAL.

// scenarioApp is the app of the hand-written scenarios.
const scenarioApp = "app-1"

// Shops of the scenario: alpha lives a full life, dev is a development store (test charges), and
// late has subscription transactions before any of its events.
const (
	shopAlpha = "gid://shopify/Shop/1001"
	shopDev   = "gid://shopify/Shop/1002"
	shopLate  = "gid://shopify/Shop/1003"
)

type scenarioEvent struct {
	shop, typ string
	at        time.Duration
	charge    string // charge, usage record or credit ID; its type, name and amount follow from it
	billingOn time.Duration
}

// scenarioCharges describes the charges the scenario's events carry.
var scenarioCharges = map[string]struct {
	typ, name string
	amount    int64
	test      bool
}{
	"gid://shopify/AppSubscription/1":    {"AppSubscription", "Basic", 999, false},
	"gid://shopify/AppSubscription/2":    {"AppSubscription", "Pro (annual)", 29990, false},
	"gid://shopify/AppPurchaseOneTime/1": {"AppPurchaseOneTime", "Setup", 4900, false},
	"gid://shopify/AppUsageRecord/1":     {"AppUsageRecord", "120 orders", 450, false},
	"gid://shopify/AppUsageRecord/2":     {"AppUsageRecord", "80 orders", 300, false},
	"gid://shopify/AppCredit/1":          {"AppCredit", "Goodwill", 500, false},
	"gid://shopify/AppSubscription/3":    {"AppSubscription", "Basic", 999, true},
	"gid://shopify/AppUsageRecord/3":     {"AppUsageRecord", "5 orders", 25, true},
	"gid://shopify/AppSubscription/4":    {"AppSubscription", "Plus", 7999, false},
}

const sday = 24 * time.Hour

// scenarioEvents: alpha installs, its Basic subscription is accepted, activated, frozen with the
// store closed, unfrozen when it reopens and canceled by the merchant; alpha uninstalls, comes back,
// takes an annual Pro plan, has usage records, a one-time charge and a credit, and is uninstalled
// again (the platform cancels Pro in the same second). dev has a test subscription and a test usage
// record. late's Plus subscription is activated after its first transactions landed.
func scenarioEvents() []scenarioEvent {
	const (
		basic, pro, setup = "gid://shopify/AppSubscription/1", "gid://shopify/AppSubscription/2", "gid://shopify/AppPurchaseOneTime/1"
		use1, use2, cred  = "gid://shopify/AppUsageRecord/1", "gid://shopify/AppUsageRecord/2", "gid://shopify/AppCredit/1"
		devSub, devUse    = "gid://shopify/AppSubscription/3", "gid://shopify/AppUsageRecord/3"
		plus              = "gid://shopify/AppSubscription/4"
	)
	return []scenarioEvent{
		{shopAlpha, evInstalled, 0, "", 0},
		{shopAlpha, "SUBSCRIPTION_CHARGE_ACCEPTED", time.Minute, basic, 30 * sday},
		{shopAlpha, "SUBSCRIPTION_CHARGE_ACTIVATED", time.Minute + 5*time.Second, basic, 30 * sday},
		{shopAlpha, "SUBSCRIPTION_CHARGE_FROZEN", 40 * sday, basic, 0},
		{shopAlpha, evDeactivated, 40 * sday, "", 0},
		{shopAlpha, evReactivated, 50 * sday, "", 0},
		{shopAlpha, "SUBSCRIPTION_CHARGE_UNFROZEN", 50 * sday, basic, 80 * sday},
		{shopAlpha, "SUBSCRIPTION_CHARGE_CANCELED", 70 * sday, basic, 0},
		{shopAlpha, evUninstalled, 90 * sday, "", 0},
		{shopAlpha, evInstalled, 120 * sday, "", 0},
		{shopAlpha, "SUBSCRIPTION_CHARGE_ACCEPTED", 120*sday + time.Minute, pro, 485 * sday},
		{shopAlpha, "SUBSCRIPTION_CHARGE_ACTIVATED", 120*sday + 2*time.Minute, pro, 485 * sday},
		{shopAlpha, "USAGE_CHARGE_APPLIED", 125 * sday, use1, 0},
		{shopAlpha, "USAGE_CHARGE_APPLIED", 128 * sday, use2, 0},
		{shopAlpha, "ONE_TIME_CHARGE_ACCEPTED", 126 * sday, setup, 0},
		{shopAlpha, "ONE_TIME_CHARGE_ACTIVATED", 126*sday + 5*time.Second, setup, 0},
		{shopAlpha, "CREDIT_APPLIED", 127 * sday, cred, 0},
		{shopAlpha, evUninstalled, 200 * sday, "", 0},
		{shopAlpha, "SUBSCRIPTION_CHARGE_CANCELED", 200 * sday, pro, 0},
		{shopDev, evInstalled, 10 * sday, "", 0},
		{shopDev, "SUBSCRIPTION_CHARGE_ACTIVATED", 10*sday + time.Minute, devSub, 40 * sday},
		{shopDev, "USAGE_CHARGE_APPLIED", 12 * sday, devUse, 0},
		{shopLate, evInstalled, 20 * sday, "", 0},
		{shopLate, "SUBSCRIPTION_CHARGE_ACTIVATED", 20*sday + time.Minute, plus, 50 * sday},
	}
}

var scenarioStart = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

func (e scenarioEvent) record(ws string, syncedAt time.Time) schemas.PlatformRecord {
	at := scenarioStart.Add(e.at)
	le := &schemas.LifecycleEvent{Type: e.typ, CustomerID: e.shop, ShopDomain: shopDomainOf(e.shop), ShopName: "Shop " + e.shop[len(e.shop)-4:],
		OccurredAt: at, ChargeID: e.charge}
	le.EventKey = strings.Join([]string{e.typ, at.Format(time.RFC3339), e.shop, e.charge}, "|")
	if c, ok := scenarioCharges[e.charge]; ok {
		amount := c.amount
		le.ChargeType, le.ChargeName, le.AmountCents, le.Currency, le.Test = c.typ, c.name, &amount, "USD", c.test
	}
	if e.billingOn > 0 {
		on := scenarioStart.Add(e.billingOn).Truncate(sday)
		le.BillingOn = &on
	}
	return schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: scenarioApp, SyncedAt: syncedAt, LifecycleEvent: le}
}

func shopDomainOf(shop string) string { return "shop-" + shop[len(shop)-4:] + ".myshopify.com" }

// scenarioTransactions are the subscription sales of Basic (monthly), Pro (annual) and Plus; Plus's
// land before any of late's events.
func scenarioTransactions(ws string, syncedAt time.Time) []schemas.PlatformRecord {
	tx := func(id, shop, charge, interval string, at time.Duration, gross int64) schemas.PlatformRecord {
		return schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: scenarioApp, SyncedAt: syncedAt,
			Transaction: &schemas.Transaction{TransactionID: id, Type: "subscription", CustomerID: shop, ShopDomain: shopDomainOf(shop),
				ChargeID: charge, CreatedAt: scenarioStart.Add(at), Currency: "USD", GrossCents: gross, NetCents: gross,
				BillingInterval: interval}}
	}
	return []schemas.PlatformRecord{
		tx("gid://partners/AppSubscriptionSale/1", shopAlpha, "gid://shopify/AppSubscription/1", "every_30_days", sday, 999),
		tx("gid://partners/AppSubscriptionSale/2", shopAlpha, "gid://shopify/AppSubscription/2", "annual", 121*sday, 29990),
		tx("gid://partners/AppSubscriptionSale/3", shopLate, "gid://shopify/AppSubscription/4", "every_30_days", 21*sday, 7999),
	}
}

func (e env) produceRecords(t *testing.T, recs []schemas.PlatformRecord) {
	t.Helper()
	for _, r := range recs {
		key := r.WorkspaceID + ":" + r.AppID + ":"
		if r.LifecycleEvent != nil {
			key += r.LifecycleEvent.CustomerID
		} else {
			key += r.Transaction.CustomerID
		}
		e.produce(t, schemas.TopicPlatformRecords, key, mustJSON(t, r))
	}
}

// derivedDump is the content of the derived tables for one workspace, without versions, one line
// per row, in key order.
func (e env) derivedDump(t *testing.T, ws string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT 'customer', customer_id, public_id, shop_id, shop_domain, shop_name, status, country, plan, toString(tags),
store_classification, toString(report_excluded), ifNull(toString(first_installed_at), 'null'), ifNull(toString(last_event_at), 'null')
FROM platform_customers FINAL WHERE workspace_id = ? ORDER BY customer_id`,
		`SELECT 'charge', charge_id, customer_id, toString(kind), name, toString(amount_cents), currency, toString(billing_interval),
status, end_reason, toString(test), toString(trial_days), ifNull(toString(capped_amount_cents), 'null'), ifNull(toString(accepted_at), 'null'),
ifNull(toString(activated_at), 'null'), ifNull(toString(ended_at), 'null'), ifNull(toString(billing_on), 'null')
FROM platform_charges FINAL WHERE workspace_id = ? ORDER BY charge_id`,
		`SELECT 'usage', usage_record_id, customer_id, charge_id, description, toString(amount_cents), currency,
toString(occurred_at), toString(test)
FROM platform_usage_charges FINAL WHERE workspace_id = ? ORDER BY usage_record_id`,
	} {
		rows, err := e.ch.Query(testenv.Ctx(t), q, ws)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols := len(rows.Columns())
		for rows.Next() {
			vals := make([]string, cols)
			ptrs := make([]any, cols)
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			b.WriteString(strings.Join(vals, "\t") + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// waitDump polls until the workspace's derived rows are want, and returns them.
func (e env) waitDump(t *testing.T, ws, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := e.derivedDump(t, ws)
		if got == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("derived rows of %s did not converge\n--- want\n%s\n--- got\n%s", ws, want, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPlatformDerivationThroughKafka lands the scenario in one workspace in API order, events
// before transactions, and checks the derived rows against a golden file; then lands it in
// another workspace in reverse order, transactions first, in separate batches, with every event
// delivered twice (a redelivery and a later re-sync), and checks that it derives the same rows.
func TestPlatformDerivationThroughKafka(t *testing.T) {
	e := setup(t)
	startPlatformLanding(t, e)
	synced := scenarioStart.Add(300 * sday)

	var inOrder []schemas.PlatformRecord
	evs := scenarioEvents()
	for _, se := range evs {
		inOrder = append(inOrder, se.record("ws-in-order", synced))
	}
	e.produceRecords(t, inOrder)
	eventually(t, "the in-order events derived", func() bool {
		return strings.Count(e.derivedDump(t, "ws-in-order"), "\n") == 3+5+3
	})
	e.produceRecords(t, scenarioTransactions("ws-in-order", synced))
	const golden = "testdata/platform_derived.golden.tsv"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		eventually(t, "the billing intervals derived", func() bool {
			d := e.derivedDump(t, "ws-in-order")
			return strings.Count(d, "\tevery_30_days\t") == 2 && strings.Contains(d, "\tannual\t")
		})
		testenv.Golden(t, golden, []byte(e.derivedDump(t, "ws-in-order")))
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	want := string(b)
	e.waitDump(t, "ws-in-order", want)

	// The same history, backwards: transactions first (late's, and the others', before any event),
	// then the events newest first in three batches, each batch landed before the next is sent.
	e.produceRecords(t, scenarioTransactions("ws-shuffled", synced))
	slices.Reverse(evs)
	landed := 0
	for part := range slices.Chunk(evs, 9) {
		var recs []schemas.PlatformRecord
		for _, se := range part {
			recs = append(recs, se.record("ws-shuffled", synced))
		}
		e.produceRecords(t, recs)
		landed += len(part)
		// Once a part's events are stored, the next part can only come in a later poll.
		eventually(t, "a part landed", func() bool {
			var n uint64
			err := e.ch.QueryRow(testenv.Ctx(t), "SELECT count() FROM platform_lifecycle_events WHERE workspace_id = 'ws-shuffled'").Scan(&n)
			return err == nil && n == uint64(landed)
		})
	}
	got := e.waitDump(t, "ws-shuffled", want)
	alphaVersion := func() uint64 {
		var v uint64
		if err := e.ch.QueryRow(testenv.Ctx(t), "SELECT max(version) FROM platform_customers WHERE workspace_id = 'ws-shuffled' AND customer_id = ?",
			shopAlpha).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := alphaVersion()
	// Redelivery of everything, and a later re-sync of everything: alpha is derived again, and
	// nothing changes.
	var again []schemas.PlatformRecord
	for _, se := range evs {
		again = append(again, se.record("ws-shuffled", synced), se.record("ws-shuffled", synced.Add(time.Hour)))
	}
	again = append(again, scenarioTransactions("ws-shuffled", synced.Add(time.Hour))...)
	e.produceRecords(t, again)
	eventually(t, "the re-sync landed and derived", func() bool {
		var n uint64
		err := e.ch.QueryRow(testenv.Ctx(t), "SELECT count() FROM platform_lifecycle_events WHERE workspace_id = 'ws-shuffled' AND synced_at = ?",
			synced.Add(time.Hour)).Scan(&n)
		return err == nil && n == uint64(len(evs)) && alphaVersion() > before
	})
	time.Sleep(500 * time.Millisecond) // the derivation of a last batch follows its insert
	if after := e.derivedDump(t, "ws-shuffled"); after != got {
		t.Fatalf("redelivery changed the derived rows\n--- before\n%s\n--- after\n%s", got, after)
	}
}
