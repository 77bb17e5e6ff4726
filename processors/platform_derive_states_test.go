package processors

import (
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

// The keys are the reporting API's contract (migration 0011): seconds × 16 + the replay order of
// docs/METRICS.md 2.1.
func TestChargeStateKeys(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for typ, kind := range map[string]uint64{"SUBSCRIPTION_CHARGE_ACCEPTED": 1, "SUBSCRIPTION_CHARGE_ACTIVATED": 2,
		"SUBSCRIPTION_CHARGE_UNFROZEN": 3, "SUBSCRIPTION_CHARGE_FROZEN": 4, "SUBSCRIPTION_CHARGE_CANCELED": 5,
		"SUBSCRIPTION_CHARGE_DECLINED": 6, "SUBSCRIPTION_CHARGE_EXPIRED": 7} {
		if k, ok := chargeStateKey(typ, at); !ok || k != uint64(at.Unix())*16+kind {
			t.Errorf("%s: %d, %v", typ, k, ok)
		}
	}
	for _, typ := range []string{evUninstalled, "ONE_TIME_CHARGE_ACTIVATED", "SUBSCRIPTION_CAPPED_AMOUNT_UPDATED", "USAGE_CHARGE_APPLIED"} {
		if _, ok := chargeStateKey(typ, at); ok {
			t.Errorf("%s has a state key", typ)
		}
	}
}

func TestAttachStates(t *testing.T) {
	events := lifeOfACustomer()
	events = append(events, events[3], foldEv(evUninstalled, 90*fday, "")) // copies: a re-synced freeze, the uninstall again
	_, charges, _ := foldCustomer("ws", "app", foldShop, events, nil)
	attachStates(charges, events)
	key := func(d time.Duration, kind uint64) uint64 { return uint64(foldAt(d).Unix())*16 + kind }
	uninstalls := []time.Time{foldAt(90 * fday)}
	want := map[string][]uint64{
		subOne: {key(time.Minute, 1), key(time.Minute+5*time.Second, 2), key(40*fday, 4), key(50*fday, 3), key(70*fday, 5)},
		subTwo: {key(120*fday+time.Minute, 1), key(120*fday+2*time.Minute, 2)},
		// A one-time charge has no subscription state events.
		oneTime: nil,
	}
	for _, c := range charges {
		if !c.StatesDerived || !reflect.DeepEqual(c.StateEvents, want[c.ChargeID]) || !reflect.DeepEqual(c.CustomerUninstalls, uninstalls) {
			t.Errorf("%s: derived %v, states %v, uninstalls %v; want %v, %v", c.ChargeID, c.StatesDerived, c.StateEvents,
				c.CustomerUninstalls, want[c.ChargeID], uninstalls)
		}
	}
}

// The deriver writes the states on the charge rows, and the reporting copy carries them
// (migration 0011); a refresh of the billing interval keeps them.
func TestDerivedChargesCarryStates(t *testing.T) {
	db := pipeline.Migrated(t)
	ctx := testenv.Ctx(t)
	ws, app := "ws-states", "app-states"
	var recs []schemas.PlatformRecord
	for _, e := range lifeOfACustomer() {
		le := schemas.LifecycleEvent{EventKey: e.EventKey, Type: e.Type, CustomerID: e.CustomerID, ShopDomain: e.ShopDomain,
			OccurredAt: e.OccurredAt, ChargeID: e.ChargeID, ChargeType: e.ChargeType, ChargeName: e.ChargeName,
			AmountCents: e.AmountCents, Currency: e.Currency}
		recs = append(recs, schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: app, SyncedAt: e.SyncedAt, LifecycleEvent: &le})
	}
	events := &TableSink[schemas.PlatformRecord]{Conn: db.Conn, Insert: insertPlatformLifecycleEvents, Row: platformLifecycleEventRow}
	if err := events.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	d := NewPlatformDeriver(db.Conn)
	if err := d.Derive(ctx, nil, recs); err != nil {
		t.Fatal(err)
	}
	sale := schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: app, SyncedAt: foldAt(130 * fday),
		Transaction: &schemas.Transaction{TransactionID: "sale-1", Type: kindSubscription, CustomerID: foldShop, ChargeID: subTwo,
			CreatedAt: foldAt(125 * fday), Currency: "USD", GrossCents: 2999, NetCents: 2999, BillingInterval: "annual"}}
	txs := &TableSink[schemas.PlatformRecord]{Conn: db.Conn, Insert: insertPlatformTransactions, Row: platformTransactionRow}
	if err := txs.Write(ctx, []schemas.PlatformRecord{sale}); err != nil {
		t.Fatal(err)
	}
	if err := d.Derive(ctx, []schemas.PlatformRecord{sale}, nil); err != nil { // a new version of subTwo: the interval changed
		t.Fatal(err)
	}
	key := func(d time.Duration, kind uint64) uint64 { return uint64(foldAt(d).Unix())*16 + kind }
	for _, table := range []string{"platform_charges", "reporting_charges"} {
		var (
			states     []uint64
			uninstalls []time.Time
			derived    uint8
			interval   string
		)
		err := db.Conn.QueryRow(ctx, `SELECT state_events, customer_uninstalls, states_derived, toString(billing_interval) FROM `+table+
			` FINAL WHERE workspace_id = ? AND charge_id = ?`, ws, subTwo).Scan(&states, &uninstalls, &derived, &interval)
		if err != nil {
			t.Fatal(err)
		}
		want := []uint64{key(120*fday+time.Minute, 1), key(120*fday+2*time.Minute, 2)}
		if derived != 1 || interval != "annual" || !reflect.DeepEqual(states, want) || len(uninstalls) != 1 || !uninstalls[0].Equal(foldAt(90*fday)) {
			t.Errorf("%s: derived %d, interval %s, states %v, uninstalls %v", table, derived, interval, states, uninstalls)
		}
	}
}
