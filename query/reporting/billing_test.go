package reporting

import (
	"encoding/json"
	"testing"
	"time"
)

func ts(s string) time.Time {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	panic(s)
}

// charge is a 30-day subscription charge activated at activated, with its activation event.
func charge(id, name string, amount int64, cur, activated string) ChargeFacts {
	c := &Charge{ID: id, Kind: "subscription", Name: name, AmountCents: amount, Currency: cur, Status: "active",
		AcceptedAt: ts(activated), ActivatedAt: ts(activated)}
	return ChargeFacts{Charge: c, LastOwn: Event{Kind: EventActivated, At: ts(activated)}, FirstActivated: ts(activated)}
}

func paid(charge, cur, at string) Payments {
	return Payments{{ChargeID: charge, Currency: cur, At: ts(at)}}
}

func TestEvaluateReasons(t *testing.T) {
	d := MustDate("2026-03-31")
	annual := charge("b", "Annual Pro", 99000, "USD", "2025-11-20T10:00:00Z")
	annual.Interval = Annual
	trial := charge("c", "Basic", 1900, "USD", "2026-03-25T10:00:00Z")
	trial.TrialDays = 14
	frozen := charge("d", "Growth", 2900, "USD", "2025-09-01T12:00:00Z")
	frozen.LastOwn = Event{Kind: EventFrozen, At: ts("2026-03-20T06:00:00Z")}
	frozenRow := charge("d2", "Growth", 2900, "USD", "2025-09-01T12:00:00Z")
	frozenRow.LastOwn, frozenRow.Status = Event{}, "frozen"
	test := charge("h", "Starter", 4900, "USD", "2026-02-01T10:00:00Z")
	test.Test = true
	pending := charge("s", "Pro", 4900, "USD", "2026-03-28T10:00:00Z")
	pending.ActivatedAt, pending.FirstActivated, pending.LastOwn = time.Time{}, time.Time{}, Event{Kind: EventAccepted, At: ts("2026-03-28T10:00:00Z")}
	canceled := charge("k", "Pro", 4900, "USD", "2025-10-01T10:00:00Z")
	canceled.LastOwn = Event{Kind: EventCanceled, At: ts("2026-03-18T10:00:00Z")}
	expiredRow := charge("e", "Pro", 4900, "USD", "2025-10-01T10:00:00Z")
	expiredRow.LastOwn, expiredRow.Status, expiredRow.EndedAt = Event{}, "EXPIRED", ts("2026-03-01T10:00:00Z")
	yen := charge("y", "Yen plan", 5000, "JPY", "2025-12-01T10:00:00Z")
	bhd := charge("x", "Gulf", 12345, "BHD", "2025-12-01T10:00:00Z")

	for _, tc := range []struct {
		name   string
		b      CustomerBilling
		paying bool
		amr    int64
		reason string
	}{
		{"no charge", CustomerBilling{}, false, 0, "not paying: no subscription charge"},
		{"only test", CustomerBilling{Charges: []ChargeFacts{test}}, false, 0, "not paying: only test charges"},
		{"pending", CustomerBilling{Charges: []ChargeFacts{pending}}, false, 0, "not paying: subscription awaiting merchant approval"},
		{"canceled", CustomerBilling{Charges: []ChargeFacts{canceled}}, false, 0, "not paying: subscription ended on 2026-03-18 (canceled)"},
		{"expired by row", CustomerBilling{Charges: []ChargeFacts{expiredRow}}, false, 0, "not paying: subscription ended on 2026-03-01 (expired)"},
		{"uninstalled", CustomerBilling{Charges: []ChargeFacts{charge("p", "Basic", 2900, "USD", "2025-09-01T10:00:00Z")},
			LastUninstall: ts("2026-03-10T10:00:00Z")}, false, 0, "not paying: subscription ended on 2026-03-10 (uninstalled)"},
		{"uninstall before activation does not end it", CustomerBilling{Charges: []ChargeFacts{charge("p2", "Lite", 1900, "USD", "2026-03-15T12:00:00Z")},
			LastUninstall: ts("2026-03-10T10:00:00Z"), Paid: paid("p2", "USD", "2026-03-15T12:05:00Z")}, true, 1900,
			`paying: active subscription "Lite" at 19.00 USD every 30 days, last subscription payment on 2026-03-15`},
		{"frozen", CustomerBilling{Charges: []ChargeFacts{frozen}, Paid: paid("d", "USD", "2026-02-28T10:00:00Z")}, false, 0,
			"not paying: subscription frozen since 2026-03-20"},
		{"frozen by row", CustomerBilling{Charges: []ChargeFacts{frozenRow}}, false, 0, "not paying: subscription frozen"},
		{"trial", CustomerBilling{Charges: []ChargeFacts{trial}}, false, 0, "not paying: in trial until 2026-04-08"},
		{"zero value", CustomerBilling{Charges: []ChargeFacts{charge("z", "Usage only", 0, "USD", "2026-01-05T10:00:00Z")}}, false, 0,
			`not paying: zero-value plan "Usage only"`},
		{"no payment yet", CustomerBilling{Charges: []ChargeFacts{charge("n", "Plus", 3900, "USD", "2026-03-10T10:00:00Z")}}, false, 0,
			"not paying: no subscription payment yet"},
		{"payment too old", CustomerBilling{Charges: []ChargeFacts{charge("o", "Plus", 3900, "USD", "2025-10-10T10:00:00Z")},
			Paid: paid("o", "USD", "2026-02-14T23:59:59Z")}, false, 0, "not paying: no subscription payment in the last 45 days"},
		{"payment on the window's first instant", CustomerBilling{Charges: []ChargeFacts{charge("o", "Plus", 3900, "USD", "2025-10-10T10:00:00Z")},
			Paid: paid("o", "USD", "2026-02-15T00:00:00Z")}, true, 3900,
			`paying: active subscription "Plus" at 39.00 USD every 30 days, last subscription payment on 2026-02-15`},
		{"payment in another currency", CustomerBilling{Charges: []ChargeFacts{charge("o", "Plus", 3900, "USD", "2025-10-10T10:00:00Z")},
			Paid: paid("o", "EUR", "2026-03-15T10:00:00Z")}, false, 0, "not paying: no subscription payment yet"},
		{"annual", CustomerBilling{Charges: []ChargeFacts{annual}, Paid: paid("b", "USD", "2025-11-20T10:05:00Z")}, true, 8250,
			`paying: active subscription "Annual Pro" at 990.00 USD per year, last subscription payment on 2025-11-20`},
		{"annual payment too old", CustomerBilling{Charges: []ChargeFacts{annual}, Paid: paid("b", "USD", "2025-03-01T10:05:00Z")}, false, 0,
			"not paying: no subscription payment in the last 395 days"},
		{"yen", CustomerBilling{Charges: []ChargeFacts{yen}, Paid: paid("y", "JPY", "2026-03-12T10:00:00Z")}, true, 5000,
			`paying: active subscription "Yen plan" at 5000 JPY every 30 days, last subscription payment on 2026-03-12`},
		{"three decimals", CustomerBilling{Charges: []ChargeFacts{bhd}, Paid: paid("x", "BHD", "2026-03-12T10:00:00Z")}, true, 12345,
			`paying: active subscription "Gulf" at 12.345 BHD every 30 days, last subscription payment on 2026-03-12`},
		{"test charge beside a real one", CustomerBilling{Charges: []ChargeFacts{test, canceled}}, false, 0,
			"not paying: subscription ended on 2026-03-18 (canceled)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evaluate(d, tc.b)
			if ev.Paying != tc.paying || ev.AMRCents != tc.amr || ev.Reason != tc.reason {
				t.Fatalf("got paying=%v amr=%d %q, want paying=%v amr=%d %q", ev.Paying, ev.AMRCents, ev.Reason, tc.paying, tc.amr, tc.reason)
			}
		})
	}
}

func TestNewestChargeInEffectWins(t *testing.T) {
	// A replacement whose cancel event has not been synced: two active charges; the newest
	// activation is in effect.
	old := charge("1", "Pro", 4900, "USD", "2025-10-01T10:00:00Z")
	newer := charge("2", "Basic", 2900, "USD", "2026-03-18T10:00:00Z")
	ev := Evaluate(MustDate("2026-03-31"), CustomerBilling{Charges: []ChargeFacts{old, newer}, Paid: paid("1", "USD", "2026-03-01T10:00:00Z")})
	if !ev.Paying || ev.AMRCents != 2900 || ev.InEffect.Facts.ID != "2" {
		t.Fatalf("got %+v", ev)
	}
}

func TestStateReplay(t *testing.T) {
	c := &Charge{ID: "c", Status: "cancelled", ActivatedAt: ts("2026-01-01T00:00:00Z"), EndedAt: ts("2026-03-10T00:00:00Z")}
	end := MustDate("2026-03-31").End()
	for _, tc := range []struct {
		name      string
		f         ChargeFacts
		uninstall string
		want      State
		cause     string
	}{
		{"row decides: ended", ChargeFacts{Charge: c}, "", StateEnded, "canceled"},
		{"row decides: ended, with its end reason", ChargeFacts{Charge: &Charge{ActivatedAt: c.ActivatedAt, EndedAt: c.EndedAt, Status: "cancelled",
			EndReason: "uninstalled"}}, "", StateEnded, "uninstalled"},
		{"row decides: active before its end", ChargeFacts{Charge: &Charge{ActivatedAt: c.ActivatedAt, EndedAt: ts("2026-04-10T00:00:00Z")}}, "", StateActive, ""},
		{"row decides: pending", ChargeFacts{Charge: &Charge{AcceptedAt: c.ActivatedAt}}, "", StatePending, ""},
		{"unfrozen", ChargeFacts{Charge: c, LastOwn: Event{Kind: EventUnfrozen, At: ts("2026-03-01T00:00:00Z")}}, "", StateActive, ""},
		{"declined", ChargeFacts{Charge: c, LastOwn: Event{Kind: EventDeclined, At: ts("2026-03-01T00:00:00Z")}}, "", StateEnded, "declined"},
		{"uninstall at the activation instant ends it", ChargeFacts{Charge: c, LastOwn: Event{Kind: EventActivated, At: ts("2026-03-01T00:00:00Z")},
			FirstActivated: ts("2026-03-01T00:00:00Z")}, "2026-03-01T00:00:00Z", StateEnded, "uninstalled"},
		{"uninstall without activation is ignored", ChargeFacts{Charge: &Charge{}, LastOwn: Event{Kind: EventAccepted, At: ts("2026-03-01T00:00:00Z")}},
			"2026-03-02T00:00:00Z", StatePending, ""},
		{"a later own event wins over an earlier uninstall", ChargeFacts{Charge: c, LastOwn: Event{Kind: EventUnfrozen, At: ts("2026-03-05T00:00:00Z")},
			FirstActivated: ts("2026-01-01T00:00:00Z")}, "2026-03-04T00:00:00Z", StateActive, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u time.Time
			if tc.uninstall != "" {
				u = ts(tc.uninstall)
			}
			got := stateOn(tc.f, u, end)
			if got.State != tc.want || got.Cause != tc.cause {
				t.Fatalf("got %+v, want state %d cause %q", got, tc.want, tc.cause)
			}
		})
	}
}

func TestEventKeyOrder(t *testing.T) {
	at := ts("2026-03-01T00:00:00Z")
	// On equal instants: ACCEPTED, ACTIVATED, UNFROZEN, FROZEN, then the ending types.
	order := []EventKind{EventAccepted, EventActivated, EventUnfrozen, EventFrozen, EventCanceled, EventDeclined, EventExpired, EventUninstalled}
	for i := 1; i < len(order); i++ {
		a, b := Event{Kind: order[i-1], At: at}, Event{Kind: order[i], At: at}
		if later(a, b) != b || later(b, a) != b {
			t.Fatalf("%d must replay after %d", order[i], order[i-1])
		}
	}
	e := Event{Kind: EventFrozen, At: at}
	if got := eventFromKey(uint64(e.key())); got != e {
		t.Fatalf("round trip: %+v", got)
	}
	kinds := map[string]EventKind{typeUninstalled: EventUninstalled}
	for typ, kind := range chargeEventKinds {
		kinds[typ] = kind
	}
	for typ, kind := range kinds {
		if want := "'" + typ + "'"; !containsInOrder(chargeEventKindSQL, want, int(kind)) {
			t.Fatalf("chargeEventKindSQL does not map %s to %d", typ, kind)
		}
	}
}

// containsInOrder checks that the n-th quoted name of the transform's first array is want (the
// second array is [1 … 8]).
func containsInOrder(sql, want string, n int) bool {
	i := 0
	for pos := 0; pos < len(sql); {
		j := indexFrom(sql, "'", pos)
		if j < 0 {
			return false
		}
		k := indexFrom(sql, "'", j+1)
		i++
		if i == n {
			return sql[j:k+1] == want
		}
		pos = k + 1
	}
	return false
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestRounding(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{{99900, 12, 8325}, {9999, 12, 833}, {99000, 12, 8250}, {23050, 3, 7683}, {5, 2, 3}, {0, 7, 0}} {
		if got := roundHalfUp(tc.a, tc.b); got != tc.want {
			t.Fatalf("roundHalfUp(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b int64
		want string
	}{{16050, 17950, "0.8942"}, {8250, 17350, "0.4755"}, {5000, 14000, "0.3571"}, {12500, 14000, "0.8929"}, {7, 7, "1.0"}, {1, 20000, "0.0001"},
		{1, 30000, "0.0"}, {3, 2, "1.5"}} {
		b, _ := json.Marshal(ratio(tc.a, tc.b))
		if string(b) != tc.want {
			t.Fatalf("ratio(%d, %d) = %s, want %s", tc.a, tc.b, b, tc.want)
		}
	}
	if b, _ := json.Marshal(ratio(1, 0)); string(b) != "null" {
		t.Fatalf("ratio over 0 = %s", b)
	}
	for _, tc := range []struct {
		cents int64
		cur   string
		want  string
	}{{4900, "USD", "49.00 USD"}, {5, "EUR", "0.05 EUR"}, {500, "JPY", "500 JPY"}, {1, "BHD", "0.001 BHD"}, {-1050, "GBX", "-10.50 GBX"}} {
		if got := formatAmount(tc.cents, tc.cur); got != tc.want {
			t.Fatalf("formatAmount(%d, %s) = %q, want %q", tc.cents, tc.cur, got, tc.want)
		}
	}
}

func TestMonthlyValue(t *testing.T) {
	f := charge("a", "A", 99900, "USD", "2025-01-01T00:00:00Z")
	if f.MonthlyValue() != 99900 {
		t.Fatal("an unknown interval is every 30 days")
	}
	f.Interval = Annual
	if f.MonthlyValue() != 8325 {
		t.Fatal("annual")
	}
	f.AmountCents = 9999
	if f.MonthlyValue() != 833 {
		t.Fatal("annual, rounded half up")
	}
}
