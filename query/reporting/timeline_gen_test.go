package reporting

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// generated writes n random customers of app into f (deterministic for a seed): plan changes up
// and down (a new charge billed at the next cycle), freezes with and without unfreezing, payments
// that stop without any event (the evidence lapses), cancellations, uninstalls and reinstalls,
// annual plans, recorded trials, zero-value plans, a currency switch, charges without events
// (their rows decide), usage sales and excluded shops. The timeline and movement tests check their
// invariants and their equality with the summary on it, where the golden datasets are too small
// to reach every combination.
func generated(f *reportingtest.Fixture, app string, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	start, end := reportingtest.At("2025-03-01T00:00:00Z"), reportingtest.Today
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	amounts := []int64{0, 900, 1900, 2900, 4900, 9900, 19900}
	currencies := []string{"USD", "USD", "USD", "EUR", "JPY"}
	for i := range n {
		shop := reportingtest.Shop(fmt.Sprintf("9%05d", i))
		domain := fmt.Sprintf("gen-%d.myshopify.com", i)
		at := start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
		f.AddCustomer(reportingtest.Customer{App: app, Shop: shop, Domain: domain, Name: domain, Installed: stamp(at), LastEvent: stamp(at)})
		f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_INSTALLED", Shop: shop, At: stamp(at)})
		if rng.IntN(10) == 0 {
			f.Exclude(domain, "", true)
		}
		cur := currencies[rng.IntN(len(currencies))]
		for c := 0; at.Before(end) && c < 5; c++ {
			id := fmt.Sprintf("gen-%d-%d", i, c)
			amount, interval := amounts[rng.IntN(len(amounts))], "every_30_days"
			cycle := 30 * 24 * time.Hour
			if rng.IntN(6) == 0 {
				interval, cycle, amount = Annual, 365*24*time.Hour, amount*10
			}
			if rng.IntN(12) == 0 { // the shop pays in another currency from now on
				cur = currencies[rng.IntN(len(currencies))]
			}
			trial := uint16(0)
			if rng.IntN(5) == 0 {
				trial = 14
			}
			ch := reportingtest.Charge{App: app, ID: id, Shop: shop, Name: id, Amount: amount, Currency: cur, Interval: interval,
				Status: "active", TrialDays: trial, Accepted: stamp(at), Activated: stamp(at)}
			noEvents := rng.IntN(15) == 0
			if !noEvents {
				for _, typ := range []string{"SUBSCRIPTION_CHARGE_ACCEPTED", "SUBSCRIPTION_CHARGE_ACTIVATED"} {
					f.AddEvent(reportingtest.Event{App: app, Type: typ, Shop: shop, At: stamp(at), Charge: id, Amount: reportingtest.Amount(amount), Currency: cur})
				}
			}
			// Payments every cycle from the trial's end (a plan change: from the next cycle) until
			// the charge ends, or stop paying at random (no event: the evidence lapses).
			life := time.Duration(rng.Int64N(int64(400 * 24 * time.Hour)))
			stop := at.Add(life)
			first := at.Add(time.Duration(trial) * 24 * time.Hour)
			if c > 0 && rng.IntN(2) == 0 {
				first = at.Add(cycle)
			}
			lapse := stop
			if rng.IntN(4) == 0 {
				lapse = at.Add(time.Duration(rng.Int64N(int64(life) + 1)))
			}
			for p := first; p.Before(lapse) && p.Before(end) && amount > 0; p = p.Add(cycle + time.Duration(rng.IntN(5)-2)*24*time.Hour) {
				f.AddTx(reportingtest.Tx{App: app, ID: fmt.Sprintf("tx-%s-%d", id, p.Unix()), Type: "subscription", Shop: shop, Charge: id,
					At: stamp(p), Currency: cur, Gross: amount, Fee: amount * 15 / 100, Net: amount - amount*15/100, Interval: interval})
			}
			if rng.IntN(3) == 0 {
				u := at.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
				f.AddTx(reportingtest.Tx{App: app, ID: "tx-usage-" + id, Type: "usage", Shop: shop, Charge: id, At: stamp(u), Currency: cur,
					Gross: 700, Fee: 105, Net: 595})
			}
			if !stop.Before(end) {
				f.AddCharge(ch)
				break
			}
			ev := func(typ string, t time.Time) {
				if !noEvents {
					f.AddEvent(reportingtest.Event{App: app, Type: typ, Shop: shop, At: stamp(t), Charge: id})
				}
			}
			next := stop
			switch rng.IntN(5) {
			case 0: // frozen, sometimes unfrozen later (then the charge goes on until canceled)
				ev("SUBSCRIPTION_CHARGE_FROZEN", stop)
				ch.Status = "frozen"
				if rng.IntN(2) == 0 {
					un := stop.Add(time.Duration(rng.IntN(20)+1) * 24 * time.Hour)
					ev("SUBSCRIPTION_CHARGE_UNFROZEN", un)
					ch.Status = "active"
					next = un.Add(time.Duration(rng.IntN(60)) * 24 * time.Hour)
					ev("SUBSCRIPTION_CHARGE_CANCELED", next)
					ch.Status, ch.Ended = "cancelled", stamp(next)
				}
			case 1: // uninstalled, reinstalled later onto a new charge (or never)
				f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_UNINSTALLED", Shop: shop, At: stamp(stop)})
				next = stop.Add(time.Duration(rng.IntN(90)+1) * 24 * time.Hour)
				f.AddEvent(reportingtest.Event{App: app, Type: "RELATIONSHIP_INSTALLED", Shop: shop, At: stamp(next)})
				if noEvents {
					ch.Status, ch.Ended = "cancelled", stamp(stop)
				}
			case 2: // canceled, a new plan later
				ev("SUBSCRIPTION_CHARGE_CANCELED", stop)
				ch.Status, ch.Ended = "cancelled", stamp(stop)
				next = stop.Add(time.Duration(rng.IntN(40)) * 24 * time.Hour)
			default: // a plan change: the new charge replaces this one at once
				ev("SUBSCRIPTION_CHARGE_CANCELED", stop)
				ch.Status, ch.Ended = "cancelled", stamp(stop)
			}
			f.AddCharge(ch)
			at = next
		}
	}
	f.Covered(app, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
}
