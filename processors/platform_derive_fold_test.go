package processors

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// foldStart is the first instant of the fold scenarios.
var foldStart = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

func foldAt(d time.Duration) time.Time { return foldStart.Add(d) }

func foldAtPtr(d time.Duration) *time.Time { t := foldAt(d); return &t }

const (
	foldShop = "gid://shopify/Shop/42"
	subOne   = "gid://shopify/AppSubscription/1"
	subTwo   = "gid://shopify/AppSubscription/2"
	oneTime  = "gid://shopify/AppPurchaseOneTime/7"
	usageRec = "gid://shopify/AppUsageRecord/9"
	credit   = "gid://shopify/AppCredit/3"
)

// ev builds a stored event; charge events get the charge's name, amount and type.
func foldEv(typ string, d time.Duration, chargeID string) storedEvent {
	e := storedEvent{CustomerID: foldShop, Type: typ, OccurredAt: foldAt(d), ChargeID: chargeID, ShopDomain: "alpha.myshopify.com",
		ShopName: "Alpha", SyncedAt: foldAt(d + time.Hour)}
	e.EventKey = typ + "|" + e.OccurredAt.Format(time.RFC3339) + "|" + chargeID
	amount := func(v int64) *int64 { return &v }
	switch chargeID {
	case subOne:
		e.ChargeType, e.ChargeName, e.AmountCents, e.Currency = "AppSubscription", "Basic", amount(999), "USD"
	case subTwo:
		e.ChargeType, e.ChargeName, e.AmountCents, e.Currency = "AppSubscription", "Pro", amount(2999), "USD"
	case oneTime:
		e.ChargeType, e.ChargeName, e.AmountCents, e.Currency = "AppPurchaseOneTime", "Setup", amount(4900), "USD"
	case usageRec:
		e.ChargeType, e.ChargeName, e.AmountCents, e.Currency = "AppUsageRecord", "120 orders", amount(450), "USD"
	case credit:
		e.ChargeType, e.ChargeName, e.AmountCents, e.Currency = "AppCredit", "Goodwill", amount(500), "USD"
	}
	return e
}

func withBillingOn(e storedEvent, d time.Duration) storedEvent { e.BillingOn = foldAtPtr(d); return e }

const fday = 24 * time.Hour

// lifeOfACustomer: install, a subscription accepted, activated, frozen (store closed), unfrozen
// (reopened) and canceled by the merchant, then an uninstall, a reinstall with a new subscription,
// usage records, a one-time charge and a credit.
func lifeOfACustomer() []storedEvent {
	return []storedEvent{
		foldEv(evInstalled, 0, ""),
		withBillingOn(foldEv("SUBSCRIPTION_CHARGE_ACCEPTED", time.Minute, subOne), 30*fday),
		withBillingOn(foldEv("SUBSCRIPTION_CHARGE_ACTIVATED", time.Minute+5*time.Second, subOne), 30*fday),
		foldEv("SUBSCRIPTION_CHARGE_FROZEN", 40*fday, subOne),
		foldEv(evDeactivated, 40*fday, ""),
		foldEv(evReactivated, 50*fday, ""),
		withBillingOn(foldEv("SUBSCRIPTION_CHARGE_UNFROZEN", 50*fday, subOne), 80*fday),
		foldEv("SUBSCRIPTION_CHARGE_CANCELED", 70*fday, subOne),
		foldEv(evUninstalled, 90*fday, ""),
		foldEv(evInstalled, 120*fday, ""),
		withBillingOn(foldEv("SUBSCRIPTION_CHARGE_ACCEPTED", 120*fday+time.Minute, subTwo), 150*fday),
		withBillingOn(foldEv("SUBSCRIPTION_CHARGE_ACTIVATED", 120*fday+2*time.Minute, subTwo), 150*fday),
		foldEv("USAGE_CHARGE_APPLIED", 125*fday, usageRec),
		foldEv("ONE_TIME_CHARGE_ACCEPTED", 126*fday, oneTime),
		foldEv("ONE_TIME_CHARGE_ACTIVATED", 126*fday+5*time.Second, oneTime),
		foldEv("CREDIT_APPLIED", 127*fday, credit),
	}
}

func TestFoldLifeOfACustomer(t *testing.T) {
	cust, charges, ok := foldCustomer("ws", "app", foldShop, lifeOfACustomer(), map[string]string{subOne: "every_30_days"})
	if !ok {
		t.Fatal("no customer")
	}
	wantCust := customerRow{WorkspaceID: "ws", AppID: "app", CustomerID: foldShop, PublicID: schemas.CustomerPublicID("app", foldShop),
		ShopID: foldShop, ShopDomain: "alpha.myshopify.com", ShopName: "Alpha", Status: customerInstalled,
		FirstInstalledAt: foldAtPtr(0), LastEventAt: foldAtPtr(127 * fday)}
	if !reflect.DeepEqual(cust, wantCust) {
		t.Errorf("customer\n got %+v\nwant %+v", cust, wantCust)
	}
	want := []chargeRow{
		{WorkspaceID: "ws", AppID: "app", ChargeID: subOne, CustomerID: foldShop, Kind: kindSubscription, Name: "Basic",
			AmountCents: 999, Currency: "USD", BillingInterval: "every_30_days", Status: chargeCanceled, EndReason: chargeCanceled,
			AcceptedAt: foldAtPtr(time.Minute), ActivatedAt: foldAtPtr(time.Minute + 5*time.Second), EndedAt: foldAtPtr(70 * fday),
			BillingOn: foldAtPtr(80 * fday)},
		{WorkspaceID: "ws", AppID: "app", ChargeID: subTwo, CustomerID: foldShop, Kind: kindSubscription, Name: "Pro",
			AmountCents: 2999, Currency: "USD", Status: chargeActive, AcceptedAt: foldAtPtr(120*fday + time.Minute),
			ActivatedAt: foldAtPtr(120*fday + 2*time.Minute), BillingOn: foldAtPtr(150 * fday)},
		{WorkspaceID: "ws", AppID: "app", ChargeID: oneTime, CustomerID: foldShop, Kind: kindOneTime, Name: "Setup",
			AmountCents: 4900, Currency: "USD", Status: chargeActive, AcceptedAt: foldAtPtr(126 * fday),
			ActivatedAt: foldAtPtr(126*fday + 5*time.Second)},
	}
	if !reflect.DeepEqual(charges, want) {
		t.Errorf("charges\n got %+v\nwant %+v", charges, want)
	}
}

func TestFoldIsOrderIndependentAndIgnoresCopies(t *testing.T) {
	base := lifeOfACustomer()
	wantCust, wantCharges, _ := foldCustomer("ws", "app", foldShop, base, nil)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		evs := append([]storedEvent(nil), base...)
		// A re-sync's copy of some events: same key, later synced_at.
		for _, j := range r.Perm(len(base))[:r.IntN(len(base))] {
			c := base[j]
			c.SyncedAt = c.SyncedAt.Add(time.Duration(1+r.IntN(5)) * time.Hour)
			evs = append(evs, c)
		}
		r.Shuffle(len(evs), func(a, b int) { evs[a], evs[b] = evs[b], evs[a] })
		cust, charges, _ := foldCustomer("ws", "app", foldShop, evs, nil)
		if !reflect.DeepEqual(cust, wantCust) || !reflect.DeepEqual(sortCharges(charges), sortCharges(wantCharges)) {
			t.Fatalf("permutation %d folds differently:\n%+v\n%+v", i, cust, charges)
		}
	}
}

func sortCharges(cs []chargeRow) map[string]chargeRow {
	m := map[string]chargeRow{}
	for _, c := range cs {
		m[c.ChargeID] = c
	}
	return m
}

func TestFoldChargeEndings(t *testing.T) {
	activated := []storedEvent{foldEv(evInstalled, 0, ""), foldEv("SUBSCRIPTION_CHARGE_ACTIVATED", time.Minute, subOne)}
	with := func(extra ...storedEvent) []storedEvent {
		return append(append([]storedEvent(nil), activated...), extra...)
	}
	for _, tc := range []struct {
		name          string
		events        []storedEvent
		status, until string
		endedAt       *time.Time
	}{
		{"uninstall with the cancel it causes, same second", with(foldEv("SUBSCRIPTION_CHARGE_CANCELED", 9*fday, subOne), foldEv(evUninstalled, 9*fday, "")),
			chargeCanceled, endUninstalled, foldAtPtr(9 * fday)},
		{"uninstall whose cancel was never synced", with(foldEv(evUninstalled, 9*fday, "")), chargeCanceled, endUninstalled, foldAtPtr(9 * fday)},
		{"canceled, uninstalled later", with(foldEv("SUBSCRIPTION_CHARGE_CANCELED", 5*fday, subOne), foldEv(evUninstalled, 9*fday, "")),
			chargeCanceled, chargeCanceled, foldAtPtr(5 * fday)},
		{"frozen when the history ends", with(foldEv("SUBSCRIPTION_CHARGE_FROZEN", 5*fday, subOne)), chargeFrozen, "", nil},
		{"frozen, then uninstalled", with(foldEv("SUBSCRIPTION_CHARGE_FROZEN", 5*fday, subOne), foldEv(evUninstalled, 9*fday, "")),
			chargeCanceled, endUninstalled, foldAtPtr(9 * fday)},
		{"declined", []storedEvent{foldEv("SUBSCRIPTION_CHARGE_DECLINED", fday, subOne)}, chargeDeclined, chargeDeclined, foldAtPtr(fday)},
		{"expired", []storedEvent{foldEv("SUBSCRIPTION_CHARGE_EXPIRED", 2*fday, subOne)}, chargeExpired, chargeExpired, foldAtPtr(2 * fday)},
		{"pending", []storedEvent{foldEv("SUBSCRIPTION_CHARGE_ACCEPTED", fday, subOne)}, chargePending, "", nil},
		{"pending at an uninstall: not ended by it", []storedEvent{foldEv("SUBSCRIPTION_CHARGE_ACCEPTED", fday, subOne), foldEv(evUninstalled, 2*fday, "")},
			chargePending, "", nil},
		{"uninstall before the activation does not end it", []storedEvent{foldEv(evUninstalled, 0, ""), foldEv(evInstalled, fday, ""),
			foldEv("SUBSCRIPTION_CHARGE_ACTIVATED", 2*fday, subOne)}, chargeActive, "", nil},
		{"only cap notices (history cut short)", []storedEvent{foldEv("SUBSCRIPTION_APPROACHING_CAPPED_AMOUNT", fday, subOne)}, chargeActive, "", nil},
		{"one-time charge declined", []storedEvent{foldEv("ONE_TIME_CHARGE_DECLINED", fday, oneTime)}, chargeDeclined, chargeDeclined, foldAtPtr(fday)},
		{"one-time charge survives the uninstall", []storedEvent{foldEv("ONE_TIME_CHARGE_ACTIVATED", fday, oneTime), foldEv(evUninstalled, 2*fday, "")},
			chargeActive, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, charges, _ := foldCustomer("ws", "app", foldShop, tc.events, nil)
			if len(charges) != 1 {
				t.Fatalf("%d charges", len(charges))
			}
			c := charges[0]
			if c.Status != tc.status || c.EndReason != tc.until || !reflect.DeepEqual(c.EndedAt, tc.endedAt) {
				t.Errorf("status %s, end reason %q, ended %v; want %s, %q, %v", c.Status, c.EndReason, c.EndedAt, tc.status, tc.until, tc.endedAt)
			}
		})
	}
}

func TestFoldCustomerStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []storedEvent
		status string
		first  *time.Time
	}{
		{"installed", []storedEvent{foldEv(evInstalled, 0, "")}, customerInstalled, foldAtPtr(0)},
		{"deactivated", []storedEvent{foldEv(evInstalled, 0, ""), foldEv(evDeactivated, fday, "")}, customerDeactivated, foldAtPtr(0)},
		{"uninstalled", []storedEvent{foldEv(evInstalled, 0, ""), foldEv(evUninstalled, fday, "")}, customerUninstalled, foldAtPtr(0)},
		{"reinstalled", []storedEvent{foldEv(evInstalled, 0, ""), foldEv(evUninstalled, fday, ""), foldEv(evInstalled, 2*fday, "")}, customerInstalled, foldAtPtr(0)},
		{"no relationship event (history cut short)", []storedEvent{foldEv("USAGE_CHARGE_APPLIED", fday, usageRec)}, customerInstalled, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, charges, ok := foldCustomer("ws", "app", foldShop, tc.events, nil)
			if !ok || c.Status != tc.status || !reflect.DeepEqual(c.FirstInstalledAt, tc.first) || len(charges) != 0 {
				t.Errorf("got %+v with %d charges; want status %s, first install %v", c, len(charges), tc.status, tc.first)
			}
		})
	}
	if _, _, ok := foldCustomer("ws", "app", foldShop, nil, nil); ok {
		t.Error("a customer without events was derived")
	}
}

func TestFoldTestFlagAndLegacyRows(t *testing.T) {
	act := foldEv("SUBSCRIPTION_CHARGE_ACTIVATED", fday, subOne)
	act.Test = true
	legacy := foldEv("SUBSCRIPTION_CHARGE_CANCELED", 2*fday, subOne)
	legacy.ChargeType = "" // landed before charge_type and test were stored
	_, charges, _ := foldCustomer("ws", "app", foldShop, []storedEvent{act, legacy}, nil)
	if len(charges) != 1 || !charges[0].Test || charges[0].Kind != kindSubscription || charges[0].Status != chargeCanceled {
		t.Fatalf("charges %+v", charges)
	}
}

func TestChunksCoverEveryKeyOnce(t *testing.T) {
	keys := map[rowKey]bool{}
	for i := range 2*deriveChunk + 7 {
		keys[rowKey{"ws", []string{"a", "b"}[i%2], string(rune('A'+i%26)) + time.Duration(i).String()}] = true
	}
	seen := map[rowKey]int{}
	var sizes []int
	for _, part := range chunks(keys) {
		sizes = append(sizes, len(part))
		for _, k := range part {
			seen[k]++
		}
	}
	if len(seen) != len(keys) || !reflect.DeepEqual(sizes, []int{deriveChunk, deriveChunk, 7}) {
		t.Fatalf("chunks %v, %d of %d keys seen", sizes, len(seen), len(keys))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%v seen %d times", k, n)
		}
	}
}
