package processors

import (
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The charge facts (migration 0027) follow what lands: after the scenario's events and sales each
// non-test subscription charge has one live row with its payments; a re-synced batch with a late
// sale of a charge whose events are not in it adds that sale once; and a charge that ends moves to
// its retired day, its row under the old day replaced by a row that is not live.
func TestChargeFactsFollowLanding(t *testing.T) {
	e := setup(t)
	startPlatformLanding(t, e)
	const ws = "ws-charge-facts"
	const plus = "gid://shopify/AppSubscription/4"
	synced := scenarioStart.Add(300 * sday)
	var events []schemas.PlatformRecord
	for _, ev := range scenarioEvents() {
		events = append(events, ev.record(ws, synced))
	}
	sales := scenarioTransactions(ws, synced)
	e.produceRecords(t, append(append([]schemas.PlatformRecord{}, events...), sales...))

	ctx := testenv.Ctx(t)
	agree := func(what string, check func() bool) {
		t.Helper()
		eventually(t, what, func() bool {
			var n uint64
			if err := e.ch.QueryRow(ctx, schemas.ChargeFactsMismatches, ws, 0, ws, ws).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 0 && check()
		})
	}
	type fact struct {
		retired  uint32
		payments []uint32
	}
	live := func() map[string]fact {
		t.Helper()
		rows, err := e.ch.Query(ctx, `SELECT charge_id, retired, payments FROM (
    SELECT charge_id, retired, payments, live FROM reporting_charge_facts FINAL WHERE workspace_id = ?) WHERE live = 1`, ws)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]fact{}
		for rows.Next() {
			var id string
			var f fact
			if err := rows.Scan(&id, &f.retired, &f.payments); err != nil {
				t.Fatal(err)
			}
			if _, dup := out[id]; dup {
				t.Fatalf("charge %s has two live rows", id)
			}
			out[id] = f
		}
		return out
	}
	day := func(d time.Duration) uint32 { return uint32(scenarioStart.Add(d).Unix() / 86400) }
	agree("the scenario's charges", func() bool {
		f := live()
		return len(f) == 3 && len(f[plus].payments) == 1
	})
	f := live()
	// Basic ended at 70 days; its customer's last uninstall (200 days) is later than 70 + 45 days.
	// Pro (annual) ended at 200 days: retired 395 days later. Plus is in effect.
	if got, want := f["gid://shopify/AppSubscription/1"].retired, day(200*sday); got != want {
		t.Errorf("Basic retired on day %d, want %d", got, want)
	}
	if got, want := f["gid://shopify/AppSubscription/2"].retired, day(595*sday); got != want {
		t.Errorf("Pro retired on day %d, want %d", got, want)
	}
	if got := f[plus].retired; got != schemas.RetiredNever {
		t.Errorf("Plus retired on day %d, want never", got)
	}
	if _, ok := f["gid://shopify/AppSubscription/3"]; ok {
		t.Error("the test charge has a row")
	}

	// The sales again, synced later, with a late sale of Plus: late's events are not in the batch.
	var again []schemas.PlatformRecord
	for _, r := range sales {
		r.SyncedAt = synced.Add(time.Hour)
		again = append(again, r)
	}
	late := scenarioTransactions(ws, synced.Add(time.Hour))[2]
	tx := *late.Transaction
	tx.TransactionID, tx.CreatedAt = "gid://partners/AppSubscriptionSale/late", scenarioStart.Add(51*sday)
	late.Transaction = &tx
	e.produceRecords(t, append(again, late))
	agree("the late sale counted once", func() bool { return len(live()[plus].payments) == 2 })

	// The whole history again, then Plus canceled at 60 days: it moves from never to its retired day.
	var resynced []schemas.PlatformRecord
	for _, r := range events {
		r.SyncedAt = synced.Add(2 * time.Hour)
		resynced = append(resynced, r)
	}
	cancel := scenarioEvent{shopLate, "SUBSCRIPTION_CHARGE_CANCELED", 60 * sday, plus, 0}.record(ws, synced.Add(2*time.Hour))
	e.produceRecords(t, append(resynced, cancel))
	agree("Plus retired", func() bool { return live()[plus].retired == day(105*sday) })
	if f := live(); len(f) != 3 || len(f[plus].payments) != 2 {
		t.Fatalf("after the cancel: %d live charges, Plus with %d payments; want 3 and 2", len(f), len(f[plus].payments))
	}
	var stale uint64
	if err := e.ch.QueryRow(ctx, `SELECT count() FROM reporting_charge_facts FINAL WHERE workspace_id = ? AND charge_id = ? AND retired = ?
    AND live = 0`, ws, plus, uint32(schemas.RetiredNever)).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale != 1 {
		t.Fatalf("Plus's row under the old retired day: %d rows not live, want 1", stale)
	}
}
