package reporting

import (
	"encoding/json"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// allDatasets writes every golden dataset.
func allDatasets(f *reportingtest.Fixture) Scope {
	reportingtest.Example37(f, "app-1")
	reportingtest.ExampleNRR(f, "app-n")
	reportingtest.ExampleConcentration(f, "app-c")
	reportingtest.ExampleLifecycle(f, "app-a", "app-b")
	edgeStates(f, "app-e")
	reportingtest.ExampleChargeEvidence(f, "app-x")
	return scopeOf("app-1", "app-n", "app-c", "app-a", "app-b", "app-e", "app-x")
}

// edgeStates are the state rules the golden datasets leave out: a frozen newest charge over an
// older active one, a charge without events (its row decides), a freeze lifted, an uninstall at
// the activation's instant, a declined charge.
func edgeStates(f *reportingtest.Fixture, app string) {
	type ev = reportingtest.Event
	shop := reportingtest.Shop
	sale := func(shop, charge, at string, gross int64) {
		f.AddTx(reportingtest.Tx{App: app, ID: "tx-" + charge + "-" + at, Type: "subscription", Shop: shop, Charge: charge, At: at,
			Currency: "USD", Gross: gross, Fee: gross * 15 / 100, Net: gross - gross*15/100, Interval: "every_30_days"})
	}
	sub := func(shop, charge, status string, amount int64, activated string, events ...ev) {
		f.AddCharge(reportingtest.Charge{App: app, ID: charge, Shop: shop, Name: charge, Amount: amount, Currency: "USD",
			Interval: "every_30_days", Status: status, Accepted: activated, Activated: activated})
		for _, e := range events {
			e.App, e.Shop, e.Charge = app, shop, charge
			f.AddEvent(e)
		}
	}
	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5001"), Domain: "victor.myshopify.com", Name: "Victor"})
	sub(shop("5001"), "sub-victor-1", "active", 2900, "2025-10-01T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2025-10-01T10:00:00Z"})
	sub(shop("5001"), "sub-victor-2", "frozen", 4900, "2026-02-01T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2026-02-01T10:00:00Z"},
		ev{Type: "SUBSCRIPTION_CHARGE_FROZEN", At: "2026-03-08T10:00:00Z"})
	sale(shop("5001"), "sub-victor-2", "2026-03-01T10:00:00Z", 4900)

	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5002"), Domain: "whiskey.myshopify.com", Name: "Whiskey"})
	f.AddCharge(reportingtest.Charge{App: app, ID: "sub-whiskey", Shop: shop("5002"), Name: "Row", Amount: 3900, Currency: "USD",
		Interval: "every_30_days", Status: "cancelled", Activated: "2025-11-01T10:00:00Z", Ended: "2026-03-10T10:00:00Z"})
	sale(shop("5002"), "sub-whiskey", "2026-02-25T10:00:00Z", 3900)

	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5003"), Domain: "xray.myshopify.com", Name: "Xray"})
	sub(shop("5003"), "sub-xray", "active", 1900, "2025-12-01T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2025-12-01T10:00:00Z"},
		ev{Type: "SUBSCRIPTION_CHARGE_FROZEN", At: "2026-02-01T10:00:00Z"}, ev{Type: "SUBSCRIPTION_CHARGE_UNFROZEN", At: "2026-03-05T10:00:00Z"})
	sale(shop("5003"), "sub-xray", "2026-03-06T10:00:00Z", 1900)

	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5004"), Domain: "yankee.myshopify.com", Name: "Yankee"})
	sub(shop("5004"), "sub-yankee", "active", 2500, "2026-01-10T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2026-01-10T10:00:00Z"})
	f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: shop("5004"), At: "2026-01-10T10:00:00Z"})
	sale(shop("5004"), "sub-yankee", "2026-03-02T10:00:00Z", 2500)

	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5005"), Domain: "zulu.myshopify.com", Name: "Zulu"})
	sub(shop("5005"), "sub-zulu-1", "active", 900, "2025-09-01T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2025-09-01T10:00:00Z"})
	sub(shop("5005"), "sub-zulu-2", "declined", 9900, "", ev{Type: "SUBSCRIPTION_CHARGE_ACCEPTED", At: "2026-03-09T10:00:00Z"},
		ev{Type: "SUBSCRIPTION_CHARGE_DECLINED", At: "2026-03-09T11:00:00Z"})
	sale(shop("5005"), "sub-zulu-1", "2026-03-03T10:00:00Z", 900)

	// An uninstall a second before the activation does not end the charge; one before a later
	// activation of the same charge does not either (the activation is later in replay order).
	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5006"), Domain: "alfa.myshopify.com", Name: "Alfa"})
	f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: shop("5006"), At: "2026-01-10T09:59:59Z"})
	sub(shop("5006"), "sub-alfa", "active", 1500, "2026-01-10T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2026-01-10T10:00:00Z"})
	sale(shop("5006"), "sub-alfa", "2026-03-04T10:00:00Z", 1500)

	f.AddCustomer(reportingtest.Customer{App: app, Shop: shop("5007"), Domain: "bravo2.myshopify.com", Name: "Bravo"})
	sub(shop("5007"), "sub-bravo2", "active", 2700, "2025-10-01T10:00:00Z", ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2025-10-01T10:00:00Z"},
		ev{Type: "SUBSCRIPTION_CHARGE_ACTIVATED", At: "2026-03-20T10:00:00Z"})
	f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: shop("5007"), At: "2026-02-15T10:00:00Z"})
	sale(shop("5007"), "sub-bravo2", "2026-03-21T10:00:00Z", 2700)
	f.Covered(app, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
}

// The summary reads a charge's states from the events the derivation stored on its row, and skips
// the charges that cannot be in effect; rows written without them are read with the events. Both
// must give the same figures, on every date.
func TestStoredStatesMatchEvents(t *testing.T) {
	derived, raw := setup(t), setup(t)
	raw.fx.RawCharges = true
	sc := allDatasets(derived.fx)
	allDatasets(raw.fx)
	derived.fx.Flush(t)
	raw.fx.Flush(t)
	ranges := []Range{defaultRange, {From: MustDate("2026-03-09"), To: MustDate("2026-03-09")}, {From: MustDate("2025-12-01"), To: MustDate("2026-03-31")},
		{From: MustDate("2026-03-06"), To: MustDate("2026-03-14")}, {From: MustDate("2025-06-01"), To: MustDate("2025-11-20")},
		{From: MustDate("2026-03-11"), To: MustDate("2026-03-11")}}
	for _, r := range ranges {
		for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
			req := Request{Scope: sc, Range: r, CustomerScope: cs}
			a, err := derived.store.Summary(ctx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := raw.store.Summary(ctx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a.ByCurrency)
			jb, _ := json.Marshal(b.ByCurrency)
			if string(ja) != string(jb) {
				t.Errorf("%v %s: stored states give\n%s\nevents give\n%s", r, cs, ja, jb)
			}
		}
	}
}
