package processors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// PlatformSink lands platform records (produced by processors/platformsync) into their tables,
// one batch insert per table and kind present in the batch. Every table is a ReplacingMergeTree
// keyed by the platform's IDs, so redelivered or re-synced records replace rather than duplicate.
// Kinds without a table writer yet (customer, charge, usage_charge, usage_event, sync_run) are
// rejected, hence dead-lettered, rather than silently dropped.
type PlatformSink struct {
	Transactions    Sink[schemas.PlatformRecord]
	LifecycleEvents Sink[schemas.PlatformRecord]
}

// NewPlatformSink builds the sink on a ClickHouse connection.
func NewPlatformSink(conn BatchConn) *PlatformSink {
	return &PlatformSink{
		Transactions:    &TableSink[schemas.PlatformRecord]{Conn: conn, Insert: insertPlatformTransactions, Row: platformTransactionRow},
		LifecycleEvents: &TableSink[schemas.PlatformRecord]{Conn: conn, Insert: insertPlatformLifecycleEvents, Row: platformLifecycleEventRow},
	}
}

// Write splits the batch by kind. A refusal of any part refuses the batch, and the loop then
// halves it until the refused records are isolated; parts already written are written again,
// which the ReplacingMergeTree tables absorb.
func (s *PlatformSink) Write(ctx context.Context, batch []schemas.PlatformRecord) error {
	var txns, events []schemas.PlatformRecord
	for _, r := range batch {
		switch r.Kind {
		case "transaction":
			txns = append(txns, r)
		case "lifecycle_event":
			events = append(events, r)
		default:
			return &RejectedError{Err: fmt.Errorf("platform record kind %q has no table writer yet", r.Kind)}
		}
	}
	if len(txns) > 0 {
		if err := s.Transactions.Write(ctx, txns); err != nil {
			return err
		}
	}
	if len(events) > 0 {
		if err := s.LifecycleEvents.Write(ctx, events); err != nil {
			return err
		}
	}
	return nil
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
	return []any{r.WorkspaceID, r.AppID, e.EventKey, e.Type, e.CustomerID, e.ShopDomain, e.OccurredAt.UTC(),
		e.ChargeID, e.ChargeName, e.AmountCents, e.Currency, e.Reason, e.Description, r.SyncedAt.UTC()}
}

// platformLandingLoop is the consume loop of the "land-platform-records" consumer. Wire it in
// New (service.go) as:
//
//	{"land-platform-records", schemas.TopicPlatformRecords, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
//		return platformLandingLoop(cfg, d.ClickHouse, dlq, cl, m, log)
//	}, nil},
func platformLandingLoop(cfg Config, conn BatchConn, dlq *DeadLetterWriter, cl Consumer, m *LoopMetrics, log *slog.Logger) *Loop[schemas.PlatformRecord] {
	return &Loop[schemas.PlatformRecord]{Name: "land-platform-records", Consumer: cl, Decode: decodePlatformRecord,
		Sink: NewPlatformSink(conn), DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll,
		Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
}
