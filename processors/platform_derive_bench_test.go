package processors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

// BenchmarkPlatformLanding measures the landing sink with and without the derivation of customers
// and charges, on partnerfake's demo data (3 apps, 2,000 shops, 18 months: about 26,000 events
// and 22,000 transactions), in batches of the loop's default size (5,000) in the order the sync
// produces them (per app, events then transactions). Each batch is inserted (what the sink does
// without derivation) and then derived, and both steps are timed separately, so the two numbers
// come from the same moments of a shared, noisy machine.
//
//   - backfill: one iteration lands the whole data set into a fresh database;
//   - incremental: one iteration lands the last day of every app (a scheduled sync's worth) into a
//     database that already holds the rest.
//
// Run: go test -run XXX -bench PlatformLanding -benchtime 3x ./processors/
func BenchmarkPlatformLanding(b *testing.B) {
	ds := partnerfake.Generate(partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	recs := fakeRecords(ds, "bench")
	cut := ds.Config.End.Add(-24 * time.Hour)
	var history, lastDay []schemas.PlatformRecord
	for _, r := range recs {
		if recordTime(r).Before(cut) {
			history = append(history, r)
		} else {
			lastDay = append(lastDay, r)
		}
	}
	const batch = 5000
	report := func(b *testing.B, n int, t landTimes) {
		b.ReportMetric(float64(n)/t.insert.Seconds(), "records/s-insert-only")
		b.ReportMetric(float64(n)/(t.insert+t.derive).Seconds(), "records/s-with-derive")
		b.ReportMetric(float64(t.derive.Milliseconds())/float64(t.batches), "derive-ms/batch")
		b.ReportMetric(float64(t.insert.Milliseconds())/float64(t.batches), "insert-ms/batch")
	}
	b.Run("backfill", func(b *testing.B) {
		var total landTimes
		for range b.N {
			b.StopTimer()
			conn := pipeline.Migrated(b).Conn
			b.StartTimer()
			total.add(landTimed(b, conn, recs, batch))
		}
		report(b, len(recs)*b.N, total)
	})
	b.Run("incremental", func(b *testing.B) {
		conn := pipeline.Migrated(b).Conn
		landTimed(b, conn, history, batch)
		b.ResetTimer()
		var total landTimes
		for range b.N {
			total.add(landTimed(b, conn, lastDay, batch))
		}
		b.ReportMetric(float64(len(lastDay)), "records/batch")
		report(b, len(lastDay)*b.N, total)
	})
}

type landTimes struct {
	insert, derive time.Duration
	batches        int
}

func (t *landTimes) add(o landTimes) {
	t.insert, t.derive, t.batches = t.insert+o.insert, t.derive+o.derive, t.batches+o.batches
}

// landTimed writes recs in batches through the sink's inserts, then derives each batch.
func landTimed(b *testing.B, conn PlatformConn, recs []schemas.PlatformRecord, batch int) landTimes {
	b.Helper()
	return landTimedWith(b, conn, recs, batch, NewPlatformDeriver(conn))
}

// landTimedWith is landTimed with a given derivation.
func landTimedWith(b *testing.B, conn PlatformConn, recs []schemas.PlatformRecord, batch int, d *PlatformDeriver) landTimes {
	b.Helper()
	s := NewPlatformSink(conn)
	s.Derive = nil
	var out landTimes
	ctx := context.Background()
	for start := 0; start < len(recs); start += batch {
		part := recs[start:min(start+batch, len(recs))]
		var txns, events []schemas.PlatformRecord
		for _, r := range part {
			if r.Kind == "transaction" {
				txns = append(txns, r)
			} else {
				events = append(events, r)
			}
		}
		t0 := time.Now()
		if err := s.Write(ctx, part); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := d.Derive(ctx, txns, events); err != nil {
			b.Fatal(err)
		}
		out.insert += t1.Sub(t0)
		out.derive += time.Since(t1)
		out.batches++
	}
	return out
}

func recordTime(r schemas.PlatformRecord) time.Time {
	if r.LifecycleEvent != nil {
		return r.LifecycleEvent.OccurredAt
	}
	return r.Transaction.CreatedAt
}

// fakeRecords converts the data set into the records the sync would produce (per app: events, then
// transactions), the way ingest/platformsync converts API nodes.
func fakeRecords(ds *partnerfake.Dataset, ws string) []schemas.PlatformRecord {
	return slices.Collect(fakeRecordSeq(ds, ws))
}

// fakeRecordSeq yields fakeRecords one at a time, so that a data set of millions of records is never
// held as records.
func fakeRecordSeq(ds *partnerfake.Dataset, ws string) iter.Seq[schemas.PlatformRecord] {
	shops := map[string]partnerfake.Shop{}
	for _, s := range ds.Shops {
		shops[s.ID] = s
	}
	synced := ds.Config.End.Add(time.Hour)
	txTypes := map[string]string{"AppSubscriptionSale": "subscription", "AppUsageSale": "usage", "AppOneTimeSale": "one_time",
		"AppSaleAdjustment": "adjustment", "AppSaleCredit": "credit"}
	return func(yield func(schemas.PlatformRecord) bool) {
		for i, app := range ds.Apps {
			for e := range ds.Events(i) {
				shop := shops[e.ShopID]
				le := &schemas.LifecycleEvent{Type: e.Type, CustomerID: e.ShopID, ShopDomain: shop.Domain, ShopName: shop.Name,
					OccurredAt: e.OccurredAt, Reason: e.Reason, Description: e.Description}
				if c := e.Charge; c != nil {
					amount := c.Amount.Minor
					le.ChargeID, le.ChargeType, le.ChargeName, le.AmountCents, le.Currency, le.Test = c.ID, c.Typename, c.Name, &amount,
						c.Amount.Currency, c.Test
					if !c.BillingOn.IsZero() {
						on := c.BillingOn
						le.BillingOn = &on
					}
				}
				// The key platformsync gives an event (a hash), so that the events lie in the table as they do in production.
				h := sha256.Sum256([]byte(strings.Join([]string{le.Type, le.OccurredAt.Format(time.RFC3339), le.CustomerID, le.ChargeID}, "\x1f")))
				le.EventKey = hex.EncodeToString(h[:16])
				if !yield(schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: app.ID, SyncedAt: synced, LifecycleEvent: le}) {
					return
				}
			}
			for tx := range ds.Transactions() {
				if tx.AppID != app.ID {
					continue
				}
				t := &schemas.Transaction{TransactionID: tx.ID, Type: txTypes[tx.Typename], CustomerID: tx.ShopID,
					ShopDomain: shops[tx.ShopID].Domain, ChargeID: tx.ChargeID, CreatedAt: tx.CreatedAt, Currency: tx.Gross.Currency,
					GrossCents: tx.Gross.Minor, PlatformFeeCents: tx.ShopifyFee.Minor, NetCents: tx.Net.Minor,
					BillingInterval: strings.ToLower(tx.BillingInterval)}
				if !yield(schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: app.ID, SyncedAt: synced, Transaction: t}) {
					return
				}
			}
		}
	}
}
