package processors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/schemas"
)

// deriveDays recomputes the customer days (schemas.CustomerDaysTable, migration 0024) the batch's
// transactions fall on and the observed usage days (schemas.ObservedDaysTable, migration 0026) its
// usage records fall on: per app, the days from the earliest to the latest record of the batch of
// every customer it names, in chunks of deriveChunk customers, each one INSERT … SELECT that
// ClickHouse runs over the customer-ordered copy (FINAL) without sending a row back. Days in
// between that the batch did not touch are written again with the same sums, which is harmless.
// The copies are filled by their views within the insert that landed the batch, so the
// recomputation sees the batch; and since a customer's records share a Kafka key, no other
// consumer lands that customer's records meanwhile, so the version written last has seen every
// record landed before it. A record without a customer is its app's customer "" (the copies name
// it so), recomputed like any other.
func (d *PlatformDeriver) deriveDays(ctx context.Context, txns, events []schemas.PlatformRecord, ver uint64) error {
	days, observed := daySpans{}, daySpans{}
	for _, r := range txns {
		days.add(r, r.Transaction.CustomerID, r.Transaction.CreatedAt)
	}
	for _, r := range events {
		if e := r.LifecycleEvent; e.Type == usageChargeApplied {
			observed.add(r, e.CustomerID, e.OccurredAt)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxDeriveLookups / 2)
	days.recompute(gctx, g, "customer days", func(ctx context.Context, k appKey, ids []string, s *daySpan) error {
		return schemas.CustomerDays(ctx, d.conn, ver, k.workspaceID, k.appID, ids, s.from, s.to)
	})
	observed.recompute(gctx, g, "observed usage days", func(ctx context.Context, k appKey, ids []string, s *daySpan) error {
		return schemas.ObservedDays(ctx, d.conn, ver, k.workspaceID, k.appID, ids, s.from, s.to)
	})
	return g.Wait()
}

type appKey struct{ workspaceID, appID string }

// daySpan is the customers of one app a batch names and the instants its records span.
type daySpan struct {
	customers map[string]bool
	from, to  time.Time
}

type daySpans map[appKey]*daySpan

func (m daySpans) add(r schemas.PlatformRecord, customerID string, at time.Time) {
	k := appKey{r.WorkspaceID, r.AppID}
	s := m[k]
	if s == nil {
		s = &daySpan{customers: map[string]bool{}, from: at, to: at}
		m[k] = s
	}
	s.customers[schemas.CustomerPublicID(r.AppID, customerID)] = true
	if at.Before(s.from) {
		s.from = at
	}
	if at.After(s.to) {
		s.to = at
	}
}

// recompute runs one statement per app and chunk of customers on g.
func (m daySpans) recompute(ctx context.Context, g *errgroup.Group, what string,
	exec func(context.Context, appKey, []string, *daySpan) error) {
	for k, s := range m {
		ids := slices.Sorted(maps.Keys(s.customers))
		for start := 0; start < len(ids); start += deriveChunk {
			chunk := ids[start:min(start+deriveChunk, len(ids))]
			g.Go(func() error {
				if err := exec(ctx, k, chunk, s); err != nil {
					return fmt.Errorf("recompute %s: %w", what, err)
				}
				return nil
			})
		}
	}
}

// deriveChargeFacts recomputes the charge facts (schemas.ChargeFactsTable, migration 0027) of every
// customer the batch names by a lifecycle event (its charges were just derived) or a subscription
// sale (a payment of one of its charges, or an interval refreshed): per app and chunk of
// deriveChunk customers, one INSERT … SELECT from the charges' copy and the customers' payments,
// then one that retires the rows it did not write. It runs after the charges are written, since it
// reads them back; like the days, the version written last has seen every row landed before it.
func (d *PlatformDeriver) deriveChargeFacts(ctx context.Context, txns, events []schemas.PlatformRecord, ver uint64) error {
	customers := map[appKey]map[string]bool{}
	add := func(r schemas.PlatformRecord, customerID string) {
		k := appKey{r.WorkspaceID, r.AppID}
		if customers[k] == nil {
			customers[k] = map[string]bool{}
		}
		customers[k][schemas.CustomerPublicID(r.AppID, customerID)] = true
	}
	for _, r := range events {
		if id := r.LifecycleEvent.CustomerID; id != "" {
			add(r, id)
		}
	}
	for _, r := range txns {
		if t := r.Transaction; t.Type == kindSubscription {
			add(r, t.CustomerID)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxDeriveLookups / 2)
	for k, set := range customers {
		ids := slices.Sorted(maps.Keys(set))
		for start := 0; start < len(ids); start += deriveChunk {
			chunk := ids[start:min(start+deriveChunk, len(ids))]
			g.Go(func() error {
				if err := schemas.ChargeFacts(gctx, d.conn, ver, k.workspaceID, k.appID, chunk); err != nil {
					return fmt.Errorf("recompute charge facts: %w", err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}
