package processors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// PlatformSink lands platform records (produced by ingest/platformsync) into their tables,
// one batch insert per table and kind present in the batch. Every table is a ReplacingMergeTree
// keyed by the platform's IDs, so redelivered or re-synced records replace rather than duplicate.
// USAGE_CHARGE_APPLIED events also land as platform_usage_charges rows. After the inserts, Derive
// (when set) recomputes the customers and charges the batch touched (platform_derive.go); the
// batch counts as written only once that succeeded too. Kinds without a table writer yet
// (customer, charge, usage_charge, usage_event, sync_run) are rejected, hence dead-lettered, rather
// than silently dropped.
type PlatformSink struct {
	Transactions    Sink[schemas.PlatformRecord]
	LifecycleEvents Sink[schemas.PlatformRecord]
	UsageCharges    Sink[schemas.PlatformRecord]
	Derive          *PlatformDeriver
}

// PlatformConn is the part of a ClickHouse connection the platform landing needs: it inserts, and
// the derivation reads back what was inserted and recomputes the customer days in ClickHouse.
type PlatformConn interface {
	BatchConn
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	Exec(ctx context.Context, query string, args ...any) error
}

var _ PlatformConn = (driver.Conn)(nil)

// NewPlatformSink builds the sink, with derivation, on a ClickHouse connection.
func NewPlatformSink(conn PlatformConn) *PlatformSink {
	return &PlatformSink{
		Transactions:    &TableSink[schemas.PlatformRecord]{Conn: conn, Insert: insertPlatformTransactions, Row: platformTransactionRow},
		LifecycleEvents: &TableSink[schemas.PlatformRecord]{Conn: conn, Insert: insertPlatformLifecycleEvents, Row: platformLifecycleEventRow},
		UsageCharges:    &TableSink[schemas.PlatformRecord]{Conn: conn, Insert: insertPlatformUsageCharges, Row: platformUsageChargeRow},
		Derive:          NewPlatformDeriver(conn),
	}
}

// Write splits the batch by kind. A refusal of any part refuses the batch, and the loop then
// halves it until the refused records are isolated; parts already written are written again,
// which the ReplacingMergeTree tables absorb (and the derivation recomputes from the tables).
func (s *PlatformSink) Write(ctx context.Context, batch []schemas.PlatformRecord) error {
	var txns, events, usage []schemas.PlatformRecord
	for _, r := range batch {
		switch r.Kind {
		case "transaction":
			txns = append(txns, r)
		case "lifecycle_event":
			events = append(events, r)
			if r.LifecycleEvent.Type == usageChargeApplied {
				usage = append(usage, r)
			}
		default:
			return &RejectedError{Err: fmt.Errorf("platform record kind %q has no table writer yet", r.Kind)}
		}
	}
	for _, part := range []struct {
		sink Sink[schemas.PlatformRecord]
		recs []schemas.PlatformRecord
	}{{s.Transactions, txns}, {s.LifecycleEvents, events}, {s.UsageCharges, usage}} {
		if len(part.recs) > 0 {
			if err := part.sink.Write(ctx, part.recs); err != nil {
				return err
			}
		}
	}
	if s.Derive == nil {
		return nil
	}
	return s.Derive.Derive(ctx, txns, events)
}

// decodePlatformRecord decodes a record and checks that the payload named by Kind is present.
func decodePlatformRecord(r *kgo.Record) (schemas.PlatformRecord, error) {
	var v schemas.PlatformRecord
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return v, fmt.Errorf("decode %s: %w", r.Topic, err)
	}
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: %s", schemas.ErrInvalidMessage, fmt.Sprintf(f, a...))
	}
	if v.WorkspaceID == "" || v.AppID == "" {
		return v, bad("workspaceId and appId are required")
	}
	switch v.Kind {
	case "transaction":
		if v.Transaction == nil || v.Transaction.TransactionID == "" {
			return v, bad("transaction payload with transactionId is required")
		}
	case "lifecycle_event":
		if v.LifecycleEvent == nil || v.LifecycleEvent.EventKey == "" {
			return v, bad("lifecycleEvent payload with eventKey is required")
		}
		// The usage record's ID keys its platform_usage_charges row.
		if v.LifecycleEvent.Type == usageChargeApplied && v.LifecycleEvent.ChargeID == "" {
			return v, bad("%s event without the usage record's chargeId", usageChargeApplied)
		}
	}
	return v, nil
}

func platformTransactionRow(r schemas.PlatformRecord) []any {
	t := r.Transaction
	return []any{r.WorkspaceID, r.AppID, t.TransactionID, t.Type, t.CustomerID, t.ShopDomain, t.ChargeID,
		t.CreatedAt.UTC(), t.Currency, t.GrossCents, t.PlatformFeeCents, t.ProcessingFeeCents, t.NetCents,
		t.BillingInterval, r.SyncedAt.UTC()}
}

func platformLifecycleEventRow(r schemas.PlatformRecord) []any {
	e := r.LifecycleEvent
	return []any{r.WorkspaceID, r.AppID, e.EventKey, e.Type, e.CustomerID, e.ShopDomain, e.ShopName, e.OccurredAt.UTC(),
		e.ChargeID, e.ChargeType, e.ChargeName, e.AmountCents, e.Currency, boolByte(e.Test), utcPtr(e.BillingOn), e.Reason,
		e.Description, r.SyncedAt.UTC()}
}

// usageChargeApplied is the event type that carries a usage record (AppUsageRecord).
const usageChargeApplied = "USAGE_CHARGE_APPLIED"

// platformUsageChargeRow is the usage-charge row of a USAGE_CHARGE_APPLIED event. The API links a
// usage record to no subscription, so charge_id stays empty and the record's own test flag is kept.
func platformUsageChargeRow(r schemas.PlatformRecord) []any {
	e := r.LifecycleEvent
	var amount int64
	if e.AmountCents != nil {
		amount = *e.AmountCents
	}
	return []any{r.WorkspaceID, r.AppID, e.ChargeID, e.CustomerID, "", e.ChargeName, amount, e.Currency,
		e.OccurredAt.UTC(), boolByte(e.Test), r.SyncedAt.UTC()}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// platformLandingLoop is the consume loop of the "land-platform-records" consumer. Wire it in
// New (service.go) as:
//
//	{"land-platform-records", schemas.TopicPlatformRecords, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
//		return platformLandingLoop(cfg, d.ClickHouse, dlq, cl, m, log)
//	}, nil},
func platformLandingLoop(cfg Config, conn PlatformConn, dlq *DeadLetterWriter, cl Consumer, m *LoopMetrics, log *slog.Logger) *Loop[schemas.PlatformRecord] {
	return &Loop[schemas.PlatformRecord]{Name: "land-platform-records", Consumer: cl, Decode: decodePlatformRecord,
		Sink: NewPlatformSink(conn), DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll,
		Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
}
