package processors

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// The copies the derivation reads (migration 0012) receive an insert's rows before the insert
// returns: the materialized views run inside it. The derivation relies on that for the batch it has
// just inserted, so every round reads right after its insert.
func TestDeriveCopiesHoldAnInsertWhenItReturns(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	s := NewPlatformSink(conn)
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops = 1, 150
	var events, sales uint64
	var batch []schemas.PlatformRecord
	check := func() {
		if err := s.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, r := range batch {
			if r.LifecycleEvent != nil {
				events++
			} else if r.Transaction.Type == kindSubscription && r.Transaction.ChargeID != "" {
				sales++
			}
		}
		batch = batch[:0]
		var e, x uint64
		if err := conn.QueryRow(ctx, "SELECT (SELECT count() FROM platform_events_by_customer), (SELECT count() FROM platform_subscription_sales_by_customer)").
			Scan(&e, &x); err != nil {
			t.Fatal(err)
		}
		if e != events || x != sales {
			t.Fatalf("right after the insert the copies hold %d events and %d subscription sales, want %d and %d", e, x, events, sales)
		}
	}
	s.Derive = nil
	for r := range fakeRecordSeq(partnerfake.Generate(cfg), "ws") {
		if batch = append(batch, r); len(batch) == 50 {
			check()
		}
	}
	check()
	if events < 1000 || sales < 100 {
		t.Fatalf("only %d events and %d sales: the check needs more rounds", events, sales)
	}
}

// The derivation reads the copies once they are recorded complete, the source tables until then,
// and both give the same rows; a copy that lacks history is not read until a backfill completed it.
func TestDeriveReadsCopiesOnlyWhenComplete(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops, cfg.TestShopRate = 2, 120, 0.1
	cfg.Start = cfg.End.AddDate(0, -8, 0)
	recs := fakeRecords(partnerfake.Generate(cfg), "ws")

	// Landing with derivation, from the copies (a fresh database records them complete).
	s := NewPlatformSink(conn)
	for part := range slices.Chunk(recs, 400) {
		if err := s.Write(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Derive.sources.known; !got.events || !got.sales {
		t.Fatalf("a fresh database's derivation reads the sources (%+v), want the copies", got)
	}
	fromCopies := env{ch: conn}.derivedDump(t, "ws")
	if n := strings.Count(fromCopies, "\n"); n < 200 {
		t.Fatalf("%d derived rows: the comparison needs more", n)
	}

	// The same customers and charges from the sources.
	onSources := NewPlatformDeriver(conn)
	onSources.sources.sourcesOnly = true
	deriveAll(t, onSources, recs)
	if got := (env{ch: conn}).derivedDump(t, "ws"); got != fromCopies {
		t.Fatalf("the sources derive other rows than the copies\n--- copies\n%s\n--- sources\n%s", fromCopies, got)
	}

	// Copies that lack the history (created on a database that held it) are not read: the
	// derivation from an emptied copy still gives the same rows.
	for _, q := range []string{"TRUNCATE TABLE copy_backfills", "TRUNCATE TABLE platform_events_by_customer",
		"TRUNCATE TABLE platform_subscription_sales_by_customer"} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	d := NewPlatformDeriver(conn)
	deriveAll(t, d, recs)
	if got := d.sources.known; got.events || got.sales {
		t.Fatalf("derivation reads incomplete copies: %+v", got)
	}
	if got := (env{ch: conn}).derivedDump(t, "ws"); got != fromCopies {
		t.Fatalf("derivation with incomplete copies differs\n--- want\n%s\n--- got\n%s", fromCopies, got)
	}

	// Backfilled, the copies are read again once the derivation looks (at most once a minute).
	if _, err := reportingbackfill.Run(ctx, conn, reportingbackfill.Options{
		Tables: []string{"platform_events_by_customer", "platform_subscription_sales_by_customer"}}); err != nil {
		t.Fatal(err)
	}
	deriveAll(t, d, recs[:1])
	if got := d.sources.known; got.events || got.sales {
		t.Fatalf("derivation looked again within a minute: %+v", got)
	}
	now := time.Now().Add(2 * copyRecheck)
	d.now = func() time.Time { return now }
	deriveAll(t, d, recs)
	if got := d.sources.known; !got.events || !got.sales {
		t.Fatalf("derivation does not read the backfilled copies: %+v", got)
	}
	if got := (env{ch: conn}).derivedDump(t, "ws"); got != fromCopies {
		t.Fatalf("derivation from the backfilled copies differs\n--- want\n%s\n--- got\n%s", fromCopies, got)
	}
}

// deriveAll derives everything recs touch, in batches of 400 records.
func deriveAll(t *testing.T, d *PlatformDeriver, recs []schemas.PlatformRecord) {
	t.Helper()
	for part := range slices.Chunk(recs, 400) {
		var txns, events []schemas.PlatformRecord
		for _, r := range part {
			if r.Transaction != nil {
				txns = append(txns, r)
			} else {
				events = append(events, r)
			}
		}
		if err := d.Derive(context.Background(), txns, events); err != nil {
			t.Fatal(err)
		}
	}
}

// From the copies the fold reads, of the usage records, only the last, the last with a domain and
// the last with a name (platform_derive_usage.go). Re-syncs not merged yet give records several
// copies, and the fold keeps the latest: here some customers' last record is synced again without
// a name and the one before it with a new name, so the customer takes the new name; others have
// every record synced twice alike. The copies and the sources derive the same rows.
func TestDeriveFromUsageRecordsThatDecide(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ctx := testenv.Ctx(t)
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops = 1, 150
	cfg.Start = cfg.End.AddDate(0, -8, 0)
	recs := fakeRecords(partnerfake.Generate(cfg), "ws")
	s := NewPlatformSink(conn)
	for part := range slices.Chunk(recs, 500) {
		if err := s.Write(ctx, part); err != nil {
			t.Fatal(err)
		}
	}

	byCustomer := map[string][]schemas.PlatformRecord{}
	for _, r := range recs {
		if le := r.LifecycleEvent; le != nil {
			byCustomer[le.CustomerID] = append(byCustomer[le.CustomerID], r)
		}
	}
	asStored := func(r schemas.PlatformRecord) storedEvent {
		return storedEvent{Type: r.LifecycleEvent.Type, OccurredAt: r.LifecycleEvent.OccurredAt, EventKey: r.LifecycleEvent.EventKey}
	}
	var resync []schemas.PlatformRecord
	renamed := map[string]bool{}
	later := recs[0].SyncedAt.Add(time.Hour)
	for _, id := range slices.Sorted(maps.Keys(byCustomer)) {
		evs := byCustomer[id]
		slices.SortFunc(evs, func(a, b schemas.PlatformRecord) int { return compareEvents(asStored(a), asStored(b)) })
		n := len(evs)
		switch {
		case n >= 3 && evs[n-1].LifecycleEvent.Type == usageChargeApplied && evs[n-2].LifecycleEvent.Type == usageChargeApplied && len(renamed) < 10:
			last, before := *evs[n-1].LifecycleEvent, *evs[n-2].LifecycleEvent
			last.ShopName, before.ShopName = "", "Renamed "+id
			for _, le := range []*schemas.LifecycleEvent{&last, &before} {
				r := evs[0]
				r.LifecycleEvent, r.SyncedAt = le, later
				resync = append(resync, r)
			}
			renamed[id] = true
		case len(renamed) >= 10 && len(resync) < 400:
			for _, r := range evs {
				r.SyncedAt = later
				resync = append(resync, r)
			}
		}
	}
	if len(renamed) < 10 || len(resync) < 300 {
		t.Fatalf("the data set gives %d customers ending with two usage records and %d records to sync again", len(renamed), len(resync))
	}
	if err := s.Write(ctx, resync); err != nil {
		t.Fatal(err)
	}
	var copied uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM (SELECT customer_id FROM platform_events_by_customer
WHERE type = 'USAGE_CHARGE_APPLIED' GROUP BY customer_id HAVING count() > uniqExact(event_key))`).Scan(&copied); err != nil {
		t.Fatal(err)
	}
	if copied < 10 {
		t.Fatalf("%d customers have usage records in several copies: the check needs unmerged re-syncs", copied)
	}

	fromCopies := env{ch: conn}.derivedDump(t, "ws")
	for id := range renamed {
		if !strings.Contains(fromCopies, "\tRenamed "+id+"\t") {
			t.Errorf("customer %s is not named after its latest named usage record", id)
		}
	}
	onSources := NewPlatformDeriver(conn)
	onSources.sources.sourcesOnly = true
	deriveAll(t, onSources, recs)
	if got := (env{ch: conn}).derivedDump(t, "ws"); got != fromCopies {
		t.Fatalf("the sources derive other rows than the copies\n--- copies\n%s\n--- sources\n%s", fromCopies, got)
	}
}
