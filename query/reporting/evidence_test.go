package reporting

import (
	"testing"
	"time"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestChargeEvidenceExample is reportingtest.ExampleChargeEvidence through ClickHouse 18.16: the
// summary, the list and the detail agree that a payment is evidence only for the charge it paid
// for (and the charges that replaced it), that a charge before its first billing date is a trial,
// and that an uninstall ends the installation's charges. Before, india (issue 12's reinstall into a
// trial) was paying 3,300 GBP with NRR 1.0, and juliet and mu were paying on the old charge's
// payment.
func TestChargeEvidenceExample(t *testing.T) {
	e := setup(t)
	cs := reportingtest.ExampleChargeEvidence(e.fx, "app-x")
	e.fx.Flush(t)
	sc := scopeOf("app-x")
	sum, err := e.store.Summary(ctx(t), Request{Scope: sc, Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "currencies", sum.Currencies, []string{"GBP", "USD"})
	jsonEq(t, "GBP", sum.ByCurrency["GBP"], CurrencyBlock{NetRevenueRetentionRate: r4(0), Usage: UsageBlock{BilledUsage: complete(BilledUsage{})}})
	jsonEq(t, "USD", sum.ByCurrency["USD"], CurrencyBlock{MRRCents: 4900, SubscriptionMRRCents: 4900, ARRCents: 58800, PayingCustomers: 1,
		ARPUCents: 4900, NetRevenueRetentionRate: r4(5052), LargestCustomerShare: r4(10000), TopFiveCustomerShare: r4(10000),
		TopTenCustomerShare: r4(10000), Usage: UsageBlock{BilledUsage: complete(BilledUsage{})}})

	want := map[string]struct {
		paying bool
		amr    int64
		reason string
	}{
		"india":  {false, 0, "not paying: in trial until 2026-04-06"},
		"juliet": {false, 0, "not paying: no subscription payment yet"},
		"kappa":  {false, 0, "not paying: in trial until 2026-04-08"},
		"lambda": {true, 4900, `paying: active subscription "Pro" at 49.00 USD every 30 days, last subscription payment on 2026-03-10`},
		"mu":     {false, 0, "not paying: no subscription payment yet"},
		"xi":     {false, 0, "not paying: no subscription payment yet"},
	}
	list, err := e.store.Customers(ctx(t), ListRequest{Scope: sc, Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]Customer{}
	for _, c := range list.Customers {
		listed[c.ID] = c
	}
	for name, w := range want {
		d, err := e.store.Customer(ctx(t), DetailRequest{Scope: sc, Ref: cs[name].ID(), Range: defaultRange})
		if err != nil {
			t.Fatal(err)
		}
		l := listed[cs[name].ID()]
		if d.Analytics.Paying.Paying != w.paying || d.Analytics.Paying.Reason != w.reason || d.Customer.AMRCents != w.amr ||
			l.Paying != w.paying || l.AMRCents != w.amr {
			t.Errorf("%s: detail %+v amr %d, list paying %v amr %d; want %v %d %q", name, d.Analytics.Paying, d.Customer.AMRCents,
				l.Paying, l.AMRCents, w.paying, w.amr, w.reason)
		}
	}

	// Before its billing date xi is in trial; india's old charge was paying before the uninstall.
	for name, w := range map[string]string{
		"xi":    "not paying: in trial until 2026-03-15",
		"india": `paying: active subscription "Growth" at 33.00 GBP every 30 days, last subscription payment on 2026-02-19`,
	} {
		d, err := e.store.Customer(ctx(t), DetailRequest{Scope: sc, Ref: cs[name].ID(), Range: Range{From: MustDate("2026-02-04"),
			To: MustDate("2026-03-05")}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Analytics.Paying.Reason != w {
			t.Errorf("%s on 03-05: %q, want %q", name, d.Analytics.Paying.Reason, w)
		}
	}
}

// TestEvidenceBelongsToTheCharge: the evaluation's own cases, without ClickHouse.
func TestEvidenceBelongsToTheCharge(t *testing.T) {
	d := MustDate("2026-03-31")
	ended := func(f ChargeFacts, at string) ChargeFacts {
		f.LastOwn, f.Ended = Event{Kind: EventCanceled, At: ts(at)}, ts(at)
		return f
	}
	billed := func(f ChargeFacts, on string) ChargeFacts { f.BillingOn = ts(on); return f }
	annual := func(f ChargeFacts) ChargeFacts { f.Interval = Annual; return f }
	old := charge("old", "Lite", 1900, "USD", "2025-09-01T10:00:00Z")
	pays := func(ps ...Payment) Payments { return ps }
	p := func(charge, at string) Payment { return Payment{ChargeID: charge, Currency: "USD", At: ts(at)} }

	for _, tc := range []struct {
		name   string
		b      CustomerBilling
		paying bool
		reason string
	}{
		{"a replacement inherits the payment of the charge it replaced",
			CustomerBilling{Charges: []ChargeFacts{ended(old, "2026-03-20T10:00:00Z"), charge("new", "Pro", 4900, "USD", "2026-03-20T10:00:00Z")},
				Paid: pays(p("old", "2026-03-10T10:00:00Z"))},
			true, `paying: active subscription "Pro" at 49.00 USD every 30 days, last subscription payment on 2026-03-10`},
		{"a replacement billed later is not a trial",
			CustomerBilling{Charges: []ChargeFacts{ended(old, "2026-03-20T10:00:00Z"),
				billed(charge("new", "Pro", 4900, "USD", "2026-03-20T10:00:00Z"), "2026-04-09")}, Paid: pays(p("old", "2026-03-10T10:00:00Z"))},
			true, `paying: active subscription "Pro" at 49.00 USD every 30 days, last subscription payment on 2026-03-10`},
		{"a charge canceled before the new one was approved pays for nothing after",
			CustomerBilling{Charges: []ChargeFacts{ended(old, "2026-03-19T10:00:00Z"), charge("new", "Pro", 4900, "USD", "2026-03-20T10:00:00Z")},
				Paid: pays(p("old", "2026-03-10T10:00:00Z"))},
			false, "not paying: no subscription payment yet"},
		{"canceled after the approval, before the activation: replaced",
			CustomerBilling{Charges: []ChargeFacts{ended(old, "2026-03-20T09:00:00Z"), func() ChargeFacts {
				f := charge("new", "Pro", 4900, "USD", "2026-03-20T10:00:00Z")
				f.AcceptedAt = ts("2026-03-20T08:59:00Z")
				return f
			}()}, Paid: pays(p("old", "2026-03-10T10:00:00Z"))},
			true, `paying: active subscription "Pro" at 49.00 USD every 30 days, last subscription payment on 2026-03-10`},
		{"an uninstall ends the installation: the reinstall's charge is in trial until its billing date",
			CustomerBilling{Charges: []ChargeFacts{func() ChargeFacts { f := old; f.Ended = ts("2026-03-06T10:00:00Z"); return f }(),
				billed(charge("new", "Growth", 3300, "USD", "2026-03-23T10:00:00Z"), "2026-04-06")},
				LastUninstall: ts("2026-03-06T10:00:00Z"), Paid: pays(p("old", "2026-02-19T10:00:00Z"))},
			false, "not paying: in trial until 2026-04-06"},
		{"the billing date passed without a sale",
			CustomerBilling{Charges: []ChargeFacts{billed(charge("new", "Plus", 3900, "USD", "2026-03-01T10:00:00Z"), "2026-03-15")}},
			false, "not paying: no subscription payment yet"},
		{"billed before its billing date: not a trial",
			CustomerBilling{Charges: []ChargeFacts{billed(charge("new", "Plus", 3900, "USD", "2026-03-25T10:00:00Z"), "2026-04-24")},
				Paid: pays(p("new", "2026-03-25T10:05:00Z"))},
			true, `paying: active subscription "Plus" at 39.00 USD every 30 days, last subscription payment on 2026-03-25`},
		{"a payment without a charge ID is evidence for no charge",
			CustomerBilling{Charges: []ChargeFacts{charge("new", "Plus", 3900, "USD", "2025-10-01T10:00:00Z")}, Paid: pays(p("", "2026-03-25T10:05:00Z"))},
			false, "not paying: no subscription payment yet"},
		{"an old payment of its own, none recent",
			CustomerBilling{Charges: []ChargeFacts{billed(charge("new", "Plus", 3900, "USD", "2025-10-01T10:00:00Z"), "2026-04-20")},
				Paid: pays(p("new", "2026-01-20T10:00:00Z"))},
			false, "not paying: no subscription payment in the last 45 days"},
		{"an annual payment of the replaced charge counts for its year",
			CustomerBilling{Charges: []ChargeFacts{ended(annual(charge("year", "Annual", 99000, "USD", "2025-06-01T10:00:00Z")), "2026-03-01T10:00:00Z"),
				charge("new", "Monthly", 9900, "USD", "2026-03-01T10:00:00Z")}, Paid: pays(p("year", "2025-06-01T10:05:00Z"))},
			true, `paying: active subscription "Monthly" at 99.00 USD every 30 days, last subscription payment on 2025-06-01`},
		{"a chain of plan changes within one cycle",
			CustomerBilling{Charges: []ChargeFacts{ended(old, "2026-03-05T10:00:00Z"),
				ended(charge("mid", "Mid", 2900, "USD", "2026-03-05T10:00:00Z"), "2026-03-12T10:00:00Z"),
				charge("new", "Pro", 4900, "USD", "2026-03-12T10:00:00Z")}, Paid: pays(p("old", "2026-02-25T10:00:00Z"))},
			true, `paying: active subscription "Pro" at 49.00 USD every 30 days, last subscription payment on 2026-02-25`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evaluate(d, tc.b)
			if ev.Paying != tc.paying || ev.Reason != tc.reason {
				t.Fatalf("got paying=%v %q, want paying=%v %q", ev.Paying, ev.Reason, tc.paying, tc.reason)
			}
		})
	}
}

func TestEndedAt(t *testing.T) {
	first := ts("2026-01-01T10:00:00Z")
	uninstalls := []time.Time{ts("2025-12-01T00:00:00Z"), ts("2026-02-01T00:00:00Z"), ts("2026-03-01T00:00:00Z")}
	for _, tc := range []struct {
		name      string
		own       string
		first     time.Time
		hasEvents bool
		want      string
	}{
		{"the first uninstall from the activation on", "", first, true, "2026-02-01T00:00:00Z"},
		{"an own ending before it", "2026-01-15T00:00:00Z", first, true, "2026-01-15T00:00:00Z"},
		{"never activated: uninstalls do not end it", "", time.Time{}, true, ""},
		{"no events: the row decides", "", time.Time{}, false, "2026-01-20T00:00:00Z"},
	} {
		var own time.Time
		if tc.own != "" {
			own = ts(tc.own)
		}
		got := endedAt(own, tc.first, uninstalls, ts("2026-01-20T00:00:00Z"), tc.hasEvents)
		if (tc.want == "" && !got.IsZero()) || (tc.want != "" && !got.Equal(ts(tc.want))) {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
}
