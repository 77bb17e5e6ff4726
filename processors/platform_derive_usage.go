package processors

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Usage records (USAGE_CHARGE_APPLIED) are most of a customer's lifecycle events (95 % at the
// benchmark scale), and the fold uses them for the customer row alone: they are about no charge
// (chargeKind), change no status and are no state event. What they can decide is the time of the
// customer's last event and the shop domain and name, taken from the last event that carries
// them. Of a customer's usage records only three can therefore matter: the last, the last with a
// domain and the last with a name, in the fold's order, each as its latest copy (orderEvents).
// Reading from the copy ordered by customer, the derivation reads the other events whole and only
// those three records, which ClickHouse picks (selectDeriveUsageByCustomer); the fold gives the
// same rows as with every record.
//
// The three are picked among every copy of every record, while the fold keeps a record's latest
// copy (orderEvents). The picks are the fold's unless a copy without a domain (or name) comes
// after the last copy with one: then the latest copy of that record may have none, and the fold
// would take an earlier record's. ClickHouse says so per customer, and such a customer has all its
// usage records read instead. It takes a later sync that drops a shop's name or domain, which the
// partner API does not do; copies alike (redelivery, a re-sync not merged yet) keep the picks exact.

// readEventsByCustomer reads the given customers' events from the copy ordered by customer: the
// events other than usage records whole, and the usage records that decide the fold.
func (d *PlatformDeriver) readEventsByCustomer(ctx context.Context, keys []rowKey) (map[rowKey][]storedEvent, error) {
	var events, usage map[rowKey][]storedEvent
	var inexact []rowKey
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { events, err = d.readEvents(gctx, selectDeriveEventsByCustomer, keys); return err })
	g.Go(func() (err error) { usage, inexact, err = d.readUsageSummary(gctx, keys); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(inexact) > 0 {
		all, err := d.readUsageRecords(ctx, inexact)
		if err != nil {
			return nil, err
		}
		for _, k := range inexact {
			usage[k] = all[k]
		}
	}
	for k, us := range usage {
		events[k] = append(events[k], us...)
	}
	return events, nil
}

// readUsageSummary returns, per customer, the usage records that decide the fold, and the
// customers for which the picks may not be the fold's, whose records it leaves out.
func (d *PlatformDeriver) readUsageSummary(ctx context.Context, keys []rowKey) (map[rowKey][]storedEvent, []rowKey, error) {
	args, asked := keyArgs(keys)
	rows, err := d.conn.Query(ctx, selectDeriveUsageByCustomer, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read usage records to derive: %w", err)
	}
	defer rows.Close()
	out := map[rowKey][]storedEvent{}
	var inexact []rowKey
	for rows.Next() {
		var k rowKey
		var domainExact, nameExact uint8
		var picked [3]storedEvent
		dest := []any{&k.WorkspaceID, &k.AppID, &k.ID, &domainExact, &nameExact}
		for i := range picked {
			e := &picked[i]
			dest = append(dest, &e.EventKey, &e.OccurredAt, &e.ShopDomain, &e.ShopName, &e.SyncedAt)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("read usage records to derive: %w", err)
		}
		switch {
		case !asked[k]:
		case domainExact == 0 || nameExact == 0:
			inexact = append(inexact, k)
		default:
			for _, e := range picked {
				if e.EventKey != "" { // argMaxIf found no record with a domain, or a name
					e.CustomerID, e.Type = k.ID, usageChargeApplied
					out[k] = append(out[k], e)
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read usage records to derive: %w", err)
	}
	return out, inexact, nil
}

// readUsageRecords reads every copy of the given customers' usage records.
func (d *PlatformDeriver) readUsageRecords(ctx context.Context, keys []rowKey) (map[rowKey][]storedEvent, error) {
	args, asked := keyArgs(keys)
	rows, err := d.conn.Query(ctx, selectDeriveUsageRecordsByCustomer, args...)
	if err != nil {
		return nil, fmt.Errorf("read usage records to derive: %w", err)
	}
	defer rows.Close()
	out := map[rowKey][]storedEvent{}
	for rows.Next() {
		e := storedEvent{Type: usageChargeApplied}
		var ws, app string
		if err := rows.Scan(&ws, &app, &e.CustomerID, &e.EventKey, &e.OccurredAt, &e.ShopDomain, &e.ShopName, &e.SyncedAt); err != nil {
			return nil, fmt.Errorf("read usage records to derive: %w", err)
		}
		if k := (rowKey{ws, app, e.CustomerID}); asked[k] {
			out[k] = append(out[k], e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage records to derive: %w", err)
	}
	return out, nil
}
