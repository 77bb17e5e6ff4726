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
// transactions fall on: per app, the days from the earliest to the latest transaction of the batch
// of every customer it names, in chunks of deriveChunk customers, each one INSERT … SELECT that
// ClickHouse runs over reporting_transactions FINAL without sending a row back. Days in between
// that the batch did not touch are written again with the same sums, which is harmless. The copy
// reporting_transactions is filled by its view within the insert that landed the batch, so the
// recomputation sees the batch; and since a customer's records share a Kafka key, no other
// consumer lands that customer's transactions meanwhile, so the version written last has seen
// every transaction landed before it.
func (d *PlatformDeriver) deriveDays(ctx context.Context, txns []schemas.PlatformRecord, ver uint64) error {
	type appKey struct{ workspaceID, appID string }
	type span struct {
		customers map[string]bool
		from, to  time.Time
	}
	apps := map[appKey]*span{}
	for _, r := range txns {
		t := r.Transaction
		if t.CustomerID == "" {
			continue
		}
		k := appKey{r.WorkspaceID, r.AppID}
		s := apps[k]
		if s == nil {
			s = &span{customers: map[string]bool{}, from: t.CreatedAt, to: t.CreatedAt}
			apps[k] = s
		}
		s.customers[schemas.CustomerPublicID(r.AppID, t.CustomerID)] = true
		if t.CreatedAt.Before(s.from) {
			s.from = t.CreatedAt
		}
		if t.CreatedAt.After(s.to) {
			s.to = t.CreatedAt
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxDeriveLookups / 2)
	for k, s := range apps {
		ids := slices.Sorted(maps.Keys(s.customers))
		for start := 0; start < len(ids); start += deriveChunk {
			chunk := ids[start:min(start+deriveChunk, len(ids))]
			g.Go(func() error {
				if err := schemas.CustomerDays(gctx, d.conn, ver, k.workspaceID, k.appID, chunk, s.from, s.to); err != nil {
					return fmt.Errorf("recompute customer days: %w", err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}
