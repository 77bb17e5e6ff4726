package reportingtest

import "time"

// The golden datasets: the worked examples of docs/METRICS.md, row by row, plus the cases the
// examples leave out. Every figure the tests expect is computed by hand in the comments and in
// METRICS.md; the request date is Today.

// Today is the request instant of every dataset: the default range is 2026-03-02 … 2026-03-31.
var Today = At("2026-03-31T12:00:00Z")

// Clock returns Today.
func Clock() time.Time { return Today }

// Shop returns a shop GID.
func Shop(n string) string { return "gid://shopify/Shop/" + n }

// subscription writes a subscription charge with its accepted/activated events and the install.
func (f *Fixture) subscription(app, shop, charge, name string, amount int64, cur, interval, activated string) {
	f.AddCharge(Charge{App: app, ID: charge, Shop: shop, Name: name, Amount: amount, Currency: cur, Interval: interval, Status: "active",
		Accepted: activated, Activated: activated})
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACCEPTED", Shop: shop, At: activated, Charge: charge, ChargeName: name,
		Amount: Amount(amount), Currency: cur})
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACTIVATED", Shop: shop, At: activated, Charge: charge, ChargeName: name,
		Amount: Amount(amount), Currency: cur})
}

// install writes a customer row and its install event.
func (f *Fixture) install(app, shop, domain, name, at string) Customer {
	c := Customer{App: app, Shop: shop, Domain: domain, Name: name, Installed: at, LastEvent: at}
	f.AddCustomer(c)
	f.AddEvent(Event{App: app, Type: "RELATIONSHIP_INSTALLED", Shop: shop, At: at})
	return c
}

// sale writes a sale at 15 % platform fee and the given processing fee.
func (f *Fixture) sale(app, id, typ, shop, charge, at, cur string, gross, processing int64, interval string) {
	fee := gross * 15 / 100
	f.AddTx(Tx{App: app, ID: id, Type: typ, Shop: shop, Charge: charge, At: at, Currency: cur, Gross: gross, Fee: fee,
		Processing: processing, Net: gross - fee - processing, Interval: interval})
}

// Example37 is METRICS 3.7 (with 3.10, 3.11 and 6): customers alpha … hotel of one app, plus the
// payments before the range that the NRR opening date needs, observed usage charges, received
// usage events, coverage, and duplicates of several rows (which must not count twice).
//
// Hand-computed, range 2026-03-02 … 2026-03-31 (opening date 2026-03-01):
//   - included: USD subscription 13,150 (alpha 4,900 + bravo 99,000/12 = 8,250), usage 4,200
//     (alpha 1,200 + echo 3,000), MRR 17,350, ARR 208,200, paying 2, ARPU 6,575; EUR 3,900 each,
//     paying 1. NRR USD: cohort alpha 4,900, bravo 8,250, delta 2,900 = 16,050 → 13,150 on the
//     close (delta frozen) = 0.8193; EUR 1.0. Concentration USD 8,250 / 17,350 = 0.4755, 1.0, 1.0.
//     Billed usage USD 4,200 / fees 752 / net 3,448 / 2; observed USD 4,300 / 4.
//   - all (golf added): USD subscription 23,050, usage 4,700, MRR 27,750, ARR 333,000, paying 3,
//     ARPU 7,683; NRR (16,050 + 9,900 → 13,150 + 9,900) = 23,050 / 25,950 = 0.8882; largest
//     10,400 / 27,750 = 0.3748. Billed usage 4,700 / 842 / 3,858 / 3.
func Example37(f *Fixture, app string) map[string]Customer {
	c := map[string]Customer{}

	// alpha: 49.00 USD every 30 days, paying. (Charge rows carry the interval of their latest sale, as
	// the sync derives it.)
	c["alpha"] = f.install(app, Shop("1001"), "alpha.myshopify.com", "Alpha Shop", "2025-06-10T08:50:00Z")
	f.AddCustomer(Customer{App: app, Shop: Shop("1001"), Domain: "alpha.myshopify.com", Name: "Alpha", Installed: "2025-06-10T08:50:00Z",
		LastEvent: "2026-03-20T09:00:00Z"}) // a newer version: the name changes
	f.subscription(app, Shop("1001"), "sub-alpha", "Starter", 4900, "USD", "every_30_days", "2025-06-10T09:05:00Z")
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACTIVATED", Shop: Shop("1001"), At: "2025-06-10T09:05:00Z", Charge: "sub-alpha",
		ChargeName: "Starter", Amount: Amount(4900), Currency: "USD"}) // duplicate event
	f.sale(app, "tx-alpha-sub-01", "subscription", Shop("1001"), "sub-alpha", "2026-01-09T10:00:00Z", "USD", 4900, 142, "every_30_days")
	f.sale(app, "tx-alpha-sub-02", "subscription", Shop("1001"), "sub-alpha", "2026-02-08T10:00:00Z", "USD", 4900, 142, "every_30_days")
	f.AddTx(Tx{App: app, ID: "tx-alpha-sub-03", Type: "subscription", Shop: Shop("1001"), Charge: "sub-alpha", At: "2026-03-10T10:00:00Z",
		Currency: "USD", Gross: 4900, Fee: 735, Processing: 142, Net: 4023, Interval: "every_30_days"})
	for range 2 { // the usage sale twice: a re-synced duplicate
		f.AddTx(Tx{App: app, ID: "tx-alpha-usage-03", Type: "usage", Shop: Shop("1001"), Charge: "sub-alpha", At: "2026-03-10T10:00:01Z",
			Currency: "USD", Gross: 1200, Fee: 180, Processing: 35, Net: 985})
	}
	f.AddTx(Tx{App: app, ID: "tx-alpha-refund-03", Type: "refund", Shop: Shop("1001"), Charge: "sub-alpha", At: "2026-03-12T15:00:00Z",
		Currency: "USD", Gross: -1000, Fee: -150, Processing: 0, Net: -850})
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-alpha-1", Shop: Shop("1001"), Charge: "sub-alpha", Amount: 400, Currency: "USD", At: "2026-02-27T09:00:00Z"})
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-alpha-2", Shop: Shop("1001"), Charge: "sub-alpha", Amount: 450, Currency: "USD", At: "2026-03-04T09:00:00Z"})
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-alpha-3", Shop: Shop("1001"), Charge: "sub-alpha", Amount: 700, Currency: "USD", At: "2026-03-20T09:00:00Z"})
	f.AddUsageEvent(UsageEvent{App: app, ID: "ue-0", Shop: Shop("1001"), Name: "orders_synced", Quantity: 7, At: "2026-02-20T10:00:00Z"})
	for range 2 { // a retried event: one row remains
		f.AddUsageEvent(UsageEvent{App: app, ID: "ue-1", Shop: Shop("1001"), Name: "orders_synced", Quantity: 5, At: "2026-03-05T10:00:00Z"})
	}
	f.AddUsageEvent(UsageEvent{App: app, ID: "ue-2", Shop: Shop("1001"), Name: "orders_synced", Quantity: 3, At: "2026-03-06T10:00:00Z"})
	// An exclusion of alpha that was lifted: the latest row decides.
	f.Exclude("alpha.myshopify.com", app, true)
	f.Exclude("alpha.myshopify.com", app, false)

	// bravo: 990.00 USD per year, paid 2025-11-20: 8,250 a month.
	c["bravo"] = f.install(app, Shop("1002"), "bravo.myshopify.com", "Bravo", "2025-11-20T09:00:00Z")
	f.subscription(app, Shop("1002"), "sub-bravo", "Annual Pro", 99000, "USD", "annual", "2025-11-20T10:00:00Z")
	f.AddTx(Tx{App: app, ID: "tx-bravo-annual", Type: "subscription", Shop: Shop("1002"), Charge: "sub-bravo", At: "2025-11-20T10:05:00Z",
		Currency: "USD", Gross: 99000, Fee: 14850, Processing: 2871, Net: 81279, Interval: "annual"})

	// charlie: in a 14-day trial from 2026-03-25 10:00.
	c["charlie"] = f.install(app, Shop("1003"), "charlie.myshopify.com", "Charlie", "2026-03-25T08:00:00Z")
	f.AddCharge(Charge{App: app, ID: "sub-charlie", Shop: Shop("1003"), Name: "Basic", Amount: 1900, Currency: "USD", Interval: "every_30_days",
		Status: "active", TrialDays: 14, Accepted: "2026-03-25T09:00:00Z", Activated: "2026-03-25T10:00:00Z"})
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACCEPTED", Shop: Shop("1003"), At: "2026-03-25T09:00:00Z", Charge: "sub-charlie"})
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACTIVATED", Shop: Shop("1003"), At: "2026-03-25T10:00:00Z", Charge: "sub-charlie"})

	// delta: frozen since 2026-03-20 (the charge row was synced twice: active, then frozen).
	c["delta"] = f.install(app, Shop("1004"), "delta.myshopify.com", "Delta", "2025-09-01T11:00:00Z")
	f.subscription(app, Shop("1004"), "sub-delta", "Growth", 2900, "USD", "every_30_days", "2025-09-01T12:00:00Z")
	f.AddCharge(Charge{App: app, ID: "sub-delta", Shop: Shop("1004"), Name: "Growth", Amount: 2900, Currency: "USD", Interval: "every_30_days", Status: "frozen",
		Accepted: "2025-09-01T12:00:00Z", Activated: "2025-09-01T12:00:00Z"})
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_FROZEN", Shop: Shop("1004"), At: "2026-03-20T06:00:00Z", Charge: "sub-delta"})
	f.sale(app, "tx-delta-01", "subscription", Shop("1004"), "sub-delta", "2026-01-30T10:00:00Z", "USD", 2900, 84, "every_30_days")
	f.AddTx(Tx{App: app, ID: "tx-delta-02", Type: "subscription", Shop: Shop("1004"), Charge: "sub-delta", At: "2026-02-28T10:00:00Z",
		Currency: "USD", Gross: 2900, Fee: 435, Processing: 84, Net: 2381, Interval: "every_30_days"})

	// echo: a zero-value plan with capped usage; usage is revenue all the same.
	c["echo"] = f.install(app, Shop("1005"), "echo.myshopify.com", "Echo", "2026-01-05T09:00:00Z")
	f.subscription(app, Shop("1005"), "sub-echo", "Usage only", 0, "USD", "every_30_days", "2026-01-05T10:00:00Z")
	f.AddTx(Tx{App: app, ID: "tx-echo-usage", Type: "usage", Shop: Shop("1005"), Charge: "sub-echo", At: "2026-03-15T10:00:00Z",
		Currency: "USD", Gross: 3000, Fee: 450, Processing: 87, Net: 2463})
	for range 2 { // a duplicate usage charge
		f.AddUsageCharge(UsageCharge{App: app, ID: "ur-echo-1", Shop: Shop("1005"), Charge: "sub-echo", Amount: 1800, Currency: "USD", At: "2026-03-08T09:00:00Z"})
	}
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-echo-2", Shop: Shop("1005"), Charge: "sub-echo", Amount: 1350, Currency: "USD", At: "2026-03-22T09:00:00Z"})
	// A usage record the platform flagged as a test (its own test flag): not counted.
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-echo-test", Shop: Shop("1005"), Amount: 5000, Currency: "USD", At: "2026-03-23T09:00:00Z",
		Test: true})
	f.AddUsageEvent(UsageEvent{App: app, ID: "ue-3", Shop: Shop("1005"), Name: "orders_synced", Quantity: 10, At: "2026-03-15T10:00:00Z"})
	f.AddUsageEvent(UsageEvent{App: app, ID: "ue-4", Shop: Shop("1005"), Name: "labels_printed", Quantity: 1, At: "2026-03-16T08:00:00Z"})

	// foxtrot: 39.00 EUR every 30 days.
	c["foxtrot"] = f.install(app, Shop("1006"), "foxtrot.myshopify.com", "Foxtrot", "2025-12-05T09:00:00Z")
	f.subscription(app, Shop("1006"), "sub-foxtrot", "Starter EU", 3900, "EUR", "every_30_days", "2025-12-05T10:00:00Z")
	f.sale(app, "tx-foxtrot-02", "subscription", Shop("1006"), "sub-foxtrot", "2026-02-03T10:00:00Z", "EUR", 3900, 113, "every_30_days")
	f.AddTx(Tx{App: app, ID: "tx-foxtrot-03", Type: "subscription", Shop: Shop("1006"), Charge: "sub-foxtrot", At: "2026-03-05T10:00:00Z",
		Currency: "EUR", Gross: 3900, Fee: 585, Processing: 113, Net: 3202, Interval: "every_30_days"})

	// golf: paying, but the workspace excluded its shop in every app.
	c["golf"] = f.install(app, Shop("1007"), "golf.myshopify.com", "Golf", "2025-08-01T09:00:00Z")
	f.subscription(app, Shop("1007"), "sub-golf", "Scale", 9900, "USD", "every_30_days", "2025-08-01T10:00:00Z")
	f.sale(app, "tx-golf-02", "subscription", Shop("1007"), "sub-golf", "2026-02-18T10:00:00Z", "USD", 9900, 287, "every_30_days")
	f.AddTx(Tx{App: app, ID: "tx-golf-03", Type: "subscription", Shop: Shop("1007"), Charge: "sub-golf", At: "2026-03-20T10:00:00Z",
		Currency: "USD", Gross: 9900, Fee: 1485, Processing: 287, Net: 8128, Interval: "every_30_days"})
	f.AddTx(Tx{App: app, ID: "tx-golf-usage", Type: "usage", Shop: Shop("1007"), Charge: "sub-golf", At: "2026-03-20T10:00:01Z",
		Currency: "USD", Gross: 500, Fee: 75, Processing: 15, Net: 410})
	f.AddUsageEvent(UsageEvent{App: app, ID: "ue-5", Shop: Shop("1007"), Name: "orders_synced", Quantity: 100, At: "2026-03-20T10:00:00Z"})
	f.Exclude("golf.myshopify.com", "", true)

	// hotel: a test charge only (a development store); its usage charge is not counted.
	c["hotel"] = f.install(app, Shop("1008"), "hotel.myshopify.com", "Hotel", "2026-02-01T09:00:00Z")
	f.AddCharge(Charge{App: app, ID: "sub-hotel", Shop: Shop("1008"), Name: "Starter", Amount: 4900, Currency: "USD", Interval: "every_30_days",
		Status: "active", Test: true, Accepted: "2026-02-01T10:00:00Z", Activated: "2026-02-01T10:00:00Z"})
	f.AddUsageCharge(UsageCharge{App: app, ID: "ur-hotel-1", Shop: Shop("1008"), Charge: "sub-hotel", Amount: 999, Currency: "USD", At: "2026-03-15T09:00:00Z"})

	// Coverage of METRICS 7.3: transactions loaded from 2024-06-01, lifecycle history from
	// 2023-02-14, both through 2026-03-31 05:10; one succeeded run.
	f.AddCursor(app, "transactions", "c1", "2026-03-31T05:10:00Z")
	f.AddCursor(app, "transactions:start", "origin", "2024-06-01T08:00:00Z")
	f.AddCursor(app, "lifecycle_events", "c2", "2026-03-31T05:10:00Z")
	f.AddCursor(app, "lifecycle_events:start", "origin", "2023-02-14T10:00:00Z")
	f.AddRun(app, "run-1", "succeeded", "2026-03-31T05:00:00Z", "2026-03-31T05:10:00Z")
	return c
}

// ExampleNRR is METRICS 3.8: range 2026-03-02 … 2026-03-31, USD. Cohort kilo 4,900, lima 8,250,
// mike 2,900, november 1,900 = 17,950; on the close kilo 2,900, lima 8,250, mike 0 (frozen),
// november 4,900 (new plan, evidence of its 02-20 payment) = 16,050: 0.8942. oscar (first paid
// 03-15) is not in the cohort. On the close, subscription MRR is 19,950 (kilo, lima, november and
// oscar paying: 4 customers).
func ExampleNRR(f *Fixture, app string) map[string]Customer {
	c := map[string]Customer{}
	paid := "2026-02-20T10:00:00Z"
	c["kilo"] = f.install(app, Shop("2001"), "kilo.myshopify.com", "Kilo", "2025-10-01T09:00:00Z")
	f.subscription(app, Shop("2001"), "sub-kilo-1", "Pro", 4900, "USD", "every_30_days", "2025-10-01T10:00:00Z")
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_CANCELED", Shop: Shop("2001"), At: "2026-03-18T10:00:00Z", Charge: "sub-kilo-1"})
	f.subscription(app, Shop("2001"), "sub-kilo-2", "Basic", 2900, "USD", "every_30_days", "2026-03-18T10:00:00Z")
	f.sale(app, "tx-kilo", "subscription", Shop("2001"), "sub-kilo-1", paid, "USD", 4900, 142, "every_30_days")

	c["lima"] = f.install(app, Shop("2002"), "lima.myshopify.com", "Lima", "2025-06-01T09:00:00Z")
	f.subscription(app, Shop("2002"), "sub-lima", "Annual", 99000, "USD", "annual", "2025-06-01T10:00:00Z")
	f.sale(app, "tx-lima", "subscription", Shop("2002"), "sub-lima", "2025-06-01T10:05:00Z", "USD", 99000, 2871, "annual")

	c["mike"] = f.install(app, Shop("2003"), "mike.myshopify.com", "Mike", "2025-10-01T09:00:00Z")
	f.subscription(app, Shop("2003"), "sub-mike", "Basic", 2900, "USD", "every_30_days", "2025-10-01T10:00:00Z")
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_FROZEN", Shop: Shop("2003"), At: "2026-03-20T10:00:00Z", Charge: "sub-mike"})
	f.sale(app, "tx-mike", "subscription", Shop("2003"), "sub-mike", paid, "USD", 2900, 84, "every_30_days")

	c["november"] = f.install(app, Shop("2004"), "november.myshopify.com", "November", "2025-09-01T09:00:00Z")
	f.subscription(app, Shop("2004"), "sub-november-1", "Lite", 1900, "USD", "every_30_days", "2025-09-01T10:00:00Z")
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_CANCELED", Shop: Shop("2004"), At: "2026-03-12T10:00:00Z", Charge: "sub-november-1"})
	f.subscription(app, Shop("2004"), "sub-november-2", "Pro", 4900, "USD", "every_30_days", "2026-03-12T10:00:00Z")
	f.sale(app, "tx-november", "subscription", Shop("2004"), "sub-november-1", paid, "USD", 1900, 55, "every_30_days")

	c["oscar"] = f.install(app, Shop("2005"), "oscar.myshopify.com", "Oscar", "2026-03-10T09:00:00Z")
	f.subscription(app, Shop("2005"), "sub-oscar", "Plus", 3900, "USD", "every_30_days", "2026-03-10T10:00:00Z")
	f.sale(app, "tx-oscar", "subscription", Shop("2005"), "sub-oscar", "2026-03-15T10:00:00Z", "USD", 3900, 113, "every_30_days")
	f.Covered(app, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	return c
}

// ExampleConcentration is the seven-customer example of METRICS 3.9: subscription MRR 5,000,
// 3,000, 2,000, 1,500, 1,000, 800 and 700 USD; T = 14,000; largest 0.3571, top five 0.8929, top
// ten 1.0.
func ExampleConcentration(f *Fixture, app string) {
	for i, amount := range []int64{5000, 3000, 2000, 1500, 1000, 800, 700} {
		n := string(rune('a'+i)) + "-conc"
		shop := Shop("30" + string(rune('0'+i)))
		f.install(app, shop, n+".myshopify.com", n, "2025-12-01T09:00:00Z")
		f.subscription(app, shop, "sub-"+n, "Plan", amount, "USD", "every_30_days", "2025-12-01T10:00:00Z")
		f.sale(app, "tx-"+n, "subscription", shop, "sub-"+n, "2026-03-20T10:00:00Z", "USD", amount, 0, "every_30_days")
	}
	f.Covered(app, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
}

// ExampleLifecycle covers churn, reactivation, pending approval, expiry, a yen plan, a one-time
// purchase and a shop in two apps (appA and appB), range 2026-03-02 … 2026-03-31:
//   - papa: paying 2,900 on the opening date, uninstalled 03-10 (which ends its charge), reinstalled
//     03-15 with a new 1,900 charge paid that day: paying 1,900 on the close (NRR counts it with
//     its closing MRR: 1,900 / 2,900 = 0.6552, with quebec in the cohort too: below).
//   - quebec: paying 4,900 on the opening date, uninstalled 03-05: churned,
//     "not paying: subscription ended on 2026-03-05 (uninstalled)". USD NRR = 1,900 / 7,800 = 0.2436.
//   - romeo: 5,000 JPY every 30 days, paid 03-12: a JPY block with MRR 5,000.
//   - sierra: a subscription accepted 03-28 and not yet activated: awaiting merchant approval.
//   - tango: a charge that expired 03-03 (not paying, at risk: it ended in the last 30 days), and a
//     one-time purchase of 15.00 USD.
//   - uniform: one shop (shared.myshopify.com) in appA and appB, paying 1,000 USD in each.
func ExampleLifecycle(f *Fixture, appA, appB string) map[string]Customer {
	c := map[string]Customer{}
	c["papa"] = f.install(appA, Shop("4001"), "papa.myshopify.com", "Papa", "2025-09-01T09:00:00Z")
	f.AddCustomer(Customer{App: appA, Shop: Shop("4001"), Domain: "papa.myshopify.com", Name: "Papa", Installed: "2025-09-01T09:00:00Z",
		LastEvent: "2026-03-15T12:00:00Z"})
	f.subscription(appA, Shop("4001"), "sub-papa-1", "Basic", 2900, "USD", "every_30_days", "2025-09-01T10:00:00Z")
	f.sale(appA, "tx-papa-1", "subscription", Shop("4001"), "sub-papa-1", "2026-02-20T10:00:00Z", "USD", 2900, 84, "every_30_days")
	f.AddEvent(Event{App: appA, Type: "RELATIONSHIP_UNINSTALLED", Shop: Shop("4001"), At: "2026-03-10T10:00:00Z", Reason: "too_expensive"})
	f.AddEvent(Event{App: appA, Type: "RELATIONSHIP_INSTALLED", Shop: Shop("4001"), At: "2026-03-15T11:00:00Z"})
	f.subscription(appA, Shop("4001"), "sub-papa-2", "Lite", 1900, "USD", "every_30_days", "2026-03-15T12:00:00Z")
	f.sale(appA, "tx-papa-2", "subscription", Shop("4001"), "sub-papa-2", "2026-03-15T12:05:00Z", "USD", 1900, 55, "every_30_days")

	c["quebec"] = f.install(appA, Shop("4002"), "quebec.myshopify.com", "Quebec", "2025-09-01T09:00:00Z")
	f.AddCustomer(Customer{App: appA, Shop: Shop("4002"), Domain: "quebec.myshopify.com", Name: "Quebec", Status: "uninstalled",
		Installed: "2025-09-01T09:00:00Z", LastEvent: "2026-03-05T10:00:00Z"})
	f.subscription(appA, Shop("4002"), "sub-quebec", "Pro", 4900, "USD", "every_30_days", "2025-09-01T10:00:00Z")
	f.sale(appA, "tx-quebec", "subscription", Shop("4002"), "sub-quebec", "2026-02-25T10:00:00Z", "USD", 4900, 142, "every_30_days")
	f.AddEvent(Event{App: appA, Type: "RELATIONSHIP_UNINSTALLED", Shop: Shop("4002"), At: "2026-03-05T10:00:00Z"})

	c["romeo"] = f.install(appA, Shop("4003"), "romeo.myshopify.com", "Romeo", "2025-12-01T09:00:00Z")
	f.subscription(appA, Shop("4003"), "sub-romeo", "Yen plan", 5000, "JPY", "every_30_days", "2025-12-01T10:00:00Z")
	f.sale(appA, "tx-romeo", "subscription", Shop("4003"), "sub-romeo", "2026-03-12T10:00:00Z", "JPY", 5000, 0, "every_30_days")

	c["sierra"] = f.install(appA, Shop("4004"), "sierra.myshopify.com", "Sierra", "2026-03-28T09:00:00Z")
	f.AddCharge(Charge{App: appA, ID: "sub-sierra", Shop: Shop("4004"), Name: "Pro", Amount: 4900, Currency: "USD", Status: "pending",
		Accepted: "2026-03-28T10:00:00Z"})
	f.AddEvent(Event{App: appA, Type: "SUBSCRIPTION_CHARGE_ACCEPTED", Shop: Shop("4004"), At: "2026-03-28T10:00:00Z", Charge: "sub-sierra"})

	c["tango"] = f.install(appA, Shop("4005"), "tango.myshopify.com", "Tango", "2025-10-01T09:00:00Z")
	f.subscription(appA, Shop("4005"), "sub-tango", "Pro", 4900, "USD", "every_30_days", "2025-10-01T10:00:00Z")
	f.AddEvent(Event{App: appA, Type: "SUBSCRIPTION_CHARGE_EXPIRED", Shop: Shop("4005"), At: "2026-03-03T10:00:00Z", Charge: "sub-tango"})
	f.AddCharge(Charge{App: appA, ID: "otc-tango", Shop: Shop("4005"), Kind: "one_time", Name: "Setup", Amount: 1500, Currency: "USD",
		Status: "active", Accepted: "2026-03-03T10:00:00Z", Activated: "2026-03-03T10:00:00Z"})
	f.sale(appA, "tx-tango-otc", "one_time", Shop("4005"), "otc-tango", "2026-03-03T10:05:00Z", "USD", 1500, 44, "")

	for _, app := range []string{appA, appB} {
		key := "uniform-" + app
		c[key] = f.install(app, Shop("4006"), "shared.myshopify.com", "Uniform", "2025-11-01T09:00:00Z")
		f.subscription(app, Shop("4006"), "sub-uniform-"+app, "Basic", 1000, "USD", "every_30_days", "2025-11-01T10:00:00Z")
		f.sale(app, "tx-uniform-"+app, "subscription", Shop("4006"), "sub-uniform-"+app, "2026-03-11T10:00:00Z", "USD", 1000, 29, "every_30_days")
	}
	f.Covered(appA, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	f.Covered(appB, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	return c
}

// ExampleCoverage is METRICS 7.3 and 8 over four apps (generated at Today):
//   - cov-a: the transaction walk stopped at the row limit at 2026-03-05 13:00 (coverageFrom
//     2026-03-06), forward cursor 2026-03-31 05:10, last run succeeded: truncated, sentence 4.
//   - cov-b: cursors but no run at all: sentence 1.
//   - cov-c: last success 2026-03-29 05:10 (> 24 hours) and the latest finished run failed:
//     sentences 2 and 3.
//   - cov-d: succeeded at 2026-03-31 05:10, a newer run still running: nothing.
func ExampleCoverage(f *Fixture) []string {
	apps := []string{"cov-a", "cov-b", "cov-c", "cov-d"}
	f.AddCursor("cov-a", "transactions", "c", "2026-03-31T05:10:00Z")
	f.AddCursor("cov-a", "transactions:start", "row_limit", "2026-03-05T13:00:00Z")
	f.AddCursor("cov-a", "lifecycle_events", "c", "2026-03-31T05:10:00Z")
	f.AddCursor("cov-a", "lifecycle_events:start", "origin", "2023-02-14T10:00:00Z")
	f.AddRun("cov-a", "a-1", "succeeded", "2026-03-31T05:00:00Z", "2026-03-31T05:10:00Z")
	for _, app := range apps[1:] {
		for _, s := range []string{"transactions", "lifecycle_events"} {
			f.AddCursor(app, s, "c", "2026-03-31T05:10:00Z")
			f.AddCursor(app, s+":start", "origin", "2024-01-01T00:00:00Z")
		}
	}
	f.AddRun("cov-c", "c-1", "succeeded", "2026-03-29T05:00:00Z", "2026-03-29T05:10:00Z")
	f.AddRun("cov-c", "c-2", "failed", "2026-03-30T05:00:00Z", "2026-03-30T05:01:00Z")
	f.AddRun("cov-d", "d-1", "succeeded", "2026-03-31T05:00:00Z", "2026-03-31T05:10:00Z")
	f.AddRun("cov-d", "d-2", "running", "2026-03-31T11:00:00Z", "")
	return apps
}

// ExampleChargeEvidence is METRICS 2.2–2.3 (payment evidence belongs to the charge it paid for; a
// charge before its first billing date is a trial; an uninstall ends the installation's charges),
// one app, range 2026-03-02 … 2026-03-31 (opening date 2026-03-01). No charge row carries trial
// days: the partner data gives none, only the billing date of the charge's events.
//   - india (issue 12's case): GBP 33.00 a month since 2025-06-01, last paid 2026-02-19 (40 days
//     before Today, covering up to 10 days ago), uninstalled 2026-03-06 (25 days ago), reinstalled
//     2026-03-23 (8 days ago) onto a new charge whose first billing date is 2026-04-06 (a 14-day
//     trial, 6 days ahead) and which has no sale: "not paying: in trial until 2026-04-06". GBP
//     block: nobody paying on the close; cohort 3,300 on the opening date, 0 on the close: NRR 0.0
//     (churn), concentration null.
//   - juliet: USD 49.00 paid 2026-02-25, that charge canceled 2026-03-05 without an uninstall; a
//     new 29.00 charge from 2026-03-20, not billed yet and with no billing date: the old payment
//     paid for the old charge only, "not paying: no subscription payment yet".
//   - kappa: a new EUR install on 2026-03-25 whose charge bills first on 2026-04-08: "not paying:
//     in trial until 2026-04-08"; no EUR block (nothing qualifies on either date).
//   - lambda: a plan change whose new charge is billed at the old cycle's next billing date: Lite
//     19.00 paid 2026-02-08 and 2026-03-10, replaced on 2026-03-20 by Pro 49.00 whose billing date
//     is 2026-04-09 and which has no sale yet. The 03-10 payment covers the new charge: paying
//     4,900, "last subscription payment on 2026-03-10", not a trial.
//   - mu: USD 29.00 paid 2026-02-10, uninstalled 2026-03-12, reinstalled 2026-03-15 onto a new
//     charge without a billing date or a sale: "not paying: no subscription payment yet".
//   - xi: USD 39.00 activated 2026-03-01 with its first billing date 2026-03-15, never billed: in
//     trial on 2026-03-05 ("in trial until 2026-03-15"); on the close its billing date has passed,
//     "not paying: no subscription payment yet".
//
// USD on the close: lambda alone pays, subscription MRR 4,900, ARR 58,800, paying 1, ARPU 4,900,
// concentration 1.0; NRR cohort juliet 4,900 + lambda 1,900 + mu 2,900 = 9,700 (xi is in trial on
// the opening date), on the close 0 + 4,900 + 0: 4,900 / 9,700 = 0.5052.
func ExampleChargeEvidence(f *Fixture, app string) map[string]Customer {
	c := map[string]Customer{}
	monthly := "every_30_days"
	// trial is a charge accepted and activated at at whose first billing date is billingOn.
	trial := func(shop, charge, name string, amount int64, cur, at, billingOn string) {
		f.AddCharge(Charge{App: app, ID: charge, Shop: shop, Name: name, Amount: amount, Currency: cur, Status: "active",
			Accepted: at, Activated: at, BillingOn: billingOn})
		f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACCEPTED", Shop: shop, At: at, Charge: charge, ChargeName: name,
			Amount: Amount(amount), Currency: cur})
		f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_ACTIVATED", Shop: shop, At: at, Charge: charge, ChargeName: name,
			Amount: Amount(amount), Currency: cur})
	}

	c["india"] = f.install(app, Shop("6001"), "india.myshopify.com", "India", "2025-06-01T09:00:00Z")
	f.subscription(app, Shop("6001"), "sub-india-1", "Growth", 3300, "GBP", monthly, "2025-06-01T10:00:00Z")
	f.sale(app, "tx-india-01", "subscription", Shop("6001"), "sub-india-1", "2026-01-20T10:00:00Z", "GBP", 3300, 96, monthly)
	f.sale(app, "tx-india-02", "subscription", Shop("6001"), "sub-india-1", "2026-02-19T10:00:00Z", "GBP", 3300, 96, monthly)
	f.AddEvent(Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: Shop("6001"), At: "2026-03-06T10:00:00Z"})
	f.AddEvent(Event{App: app, Type: "RELATIONSHIP_INSTALLED", Shop: Shop("6001"), At: "2026-03-23T09:00:00Z"})
	trial(Shop("6001"), "sub-india-2", "Growth", 3300, "GBP", "2026-03-23T10:00:00Z", "2026-04-06")

	c["juliet"] = f.install(app, Shop("6002"), "juliet.myshopify.com", "Juliet", "2025-10-01T09:00:00Z")
	f.subscription(app, Shop("6002"), "sub-juliet-1", "Pro", 4900, "USD", monthly, "2025-10-01T10:00:00Z")
	f.sale(app, "tx-juliet-1", "subscription", Shop("6002"), "sub-juliet-1", "2026-02-25T10:00:00Z", "USD", 4900, 142, monthly)
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_CANCELED", Shop: Shop("6002"), At: "2026-03-05T10:00:00Z", Charge: "sub-juliet-1"})
	f.subscription(app, Shop("6002"), "sub-juliet-2", "Basic", 2900, "USD", monthly, "2026-03-20T10:00:00Z")

	c["kappa"] = f.install(app, Shop("6003"), "kappa.myshopify.com", "Kappa", "2026-03-25T09:00:00Z")
	trial(Shop("6003"), "sub-kappa", "Starter", 1900, "EUR", "2026-03-25T10:00:00Z", "2026-04-08")

	c["lambda"] = f.install(app, Shop("6004"), "lambda.myshopify.com", "Lambda", "2025-09-01T09:00:00Z")
	f.subscription(app, Shop("6004"), "sub-lambda-1", "Lite", 1900, "USD", monthly, "2025-09-01T10:00:00Z")
	f.sale(app, "tx-lambda-1", "subscription", Shop("6004"), "sub-lambda-1", "2026-02-08T10:00:00Z", "USD", 1900, 55, monthly)
	f.sale(app, "tx-lambda-2", "subscription", Shop("6004"), "sub-lambda-1", "2026-03-10T10:00:00Z", "USD", 1900, 55, monthly)
	f.AddEvent(Event{App: app, Type: "SUBSCRIPTION_CHARGE_CANCELED", Shop: Shop("6004"), At: "2026-03-20T10:00:00Z", Charge: "sub-lambda-1"})
	trial(Shop("6004"), "sub-lambda-2", "Pro", 4900, "USD", "2026-03-20T10:00:00Z", "2026-04-09")

	c["mu"] = f.install(app, Shop("6005"), "mu.myshopify.com", "Mu", "2025-11-01T09:00:00Z")
	f.subscription(app, Shop("6005"), "sub-mu-1", "Basic", 2900, "USD", monthly, "2025-11-01T10:00:00Z")
	f.sale(app, "tx-mu-1", "subscription", Shop("6005"), "sub-mu-1", "2026-02-10T10:00:00Z", "USD", 2900, 84, monthly)
	f.AddEvent(Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: Shop("6005"), At: "2026-03-12T10:00:00Z"})
	f.AddEvent(Event{App: app, Type: "RELATIONSHIP_INSTALLED", Shop: Shop("6005"), At: "2026-03-15T09:00:00Z"})
	f.subscription(app, Shop("6005"), "sub-mu-2", "Basic", 2900, "USD", monthly, "2026-03-15T10:00:00Z")

	c["xi"] = f.install(app, Shop("6006"), "xi.myshopify.com", "Xi", "2026-03-01T09:00:00Z")
	trial(Shop("6006"), "sub-xi", "Plus", 3900, "USD", "2026-03-01T10:00:00Z", "2026-03-15")

	f.Covered(app, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	return c
}
