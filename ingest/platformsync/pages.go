package platformsync

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// item is one record of a page, in API order. rec is nil for transaction types the sync does not
// store (they still move the cursor).
type item struct {
	rec    *kgo.Record
	at     time.Time
	cursor string
}

// page is one page of either walk: more is hasNextPage forward and hasPreviousPage backward.
type page struct {
	items []item
	more  bool
}

func (p page) last() item  { return p.items[len(p.items)-1] }
func (p page) first() item { return p.items[0] }

// forwardPage reads the page after the cursor in [from, to].
func (s *Syncer) forwardPage(ctx context.Context, ws, app, stream string, from, to time.Time, after string) (page, error) {
	if stream == StreamTransactions {
		p, err := s.Client.Transactions(ctx, s.platformApp(app), from, to, 0, after)
		if err != nil {
			return page{}, err
		}
		items, err := s.transactionItems(ws, app, p.Nodes, p.Cursors)
		return page{items: items, more: p.HasNextPage}, err
	}
	p, err := s.Client.Events(ctx, s.platformApp(app), from, to, 0, after)
	if err != nil {
		return page{}, err
	}
	items, err := s.eventItems(ws, app, p.Nodes, p.Cursors)
	return page{items: items, more: p.HasNextPage}, err
}

// backwardPage reads the page before the cursor in [from, to].
func (s *Syncer) backwardPage(ctx context.Context, ws, app, stream string, from, to time.Time, before string) (page, error) {
	if stream == StreamTransactions {
		p, err := s.Client.TransactionsBefore(ctx, s.platformApp(app), from, to, 0, before)
		if err != nil {
			return page{}, err
		}
		items, err := s.transactionItems(ws, app, p.Nodes, p.Cursors)
		return page{items: items, more: p.HasPreviousPage}, err
	}
	p, err := s.Client.EventsBefore(ctx, s.platformApp(app), from, to, 0, before)
	if err != nil {
		return page{}, err
	}
	items, err := s.eventItems(ws, app, p.Nodes, p.Cursors)
	return page{items: items, more: p.HasPreviousPage}, err
}

func (s *Syncer) transactionItems(ws, app string, nodes []TransactionNode, cursors []string) ([]item, error) {
	syncedAt := s.now()
	out := make([]item, 0, len(nodes))
	for i, nd := range nodes {
		it := item{at: nd.CreatedAt.UTC(), cursor: cursors[i]}
		t, ok, err := convertTransaction(nd)
		if err != nil {
			return nil, fmt.Errorf("transaction %s: %w", clip(nd.ID), err)
		}
		if ok {
			r := schemas.PlatformRecord{Kind: "transaction", WorkspaceID: ws, AppID: app, SyncedAt: syncedAt, Transaction: &t}
			if it.rec, err = s.record(r, t.CustomerID); err != nil {
				return nil, err
			}
		}
		out = append(out, it)
	}
	return out, nil
}

func (s *Syncer) eventItems(ws, app string, nodes []EventNode, cursors []string) ([]item, error) {
	syncedAt := s.now()
	out := make([]item, 0, len(nodes))
	for i, nd := range nodes {
		e, err := convertEvent(nd)
		if err != nil {
			return nil, fmt.Errorf("event %s at %s: %w", clip(nd.Type), nd.OccurredAt, err)
		}
		r := schemas.PlatformRecord{Kind: "lifecycle_event", WorkspaceID: ws, AppID: app, SyncedAt: syncedAt, LifecycleEvent: &e}
		rec, err := s.record(r, e.CustomerID)
		if err != nil {
			return nil, err
		}
		out = append(out, item{rec: rec, at: nd.OccurredAt.UTC(), cursor: cursors[i]})
	}
	return out, nil
}

// record keys by workspace, app and customer, so one customer's records stay in order on one
// partition.
func (s *Syncer) record(r schemas.PlatformRecord, customer string) (*kgo.Record, error) {
	v, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &kgo.Record{Topic: s.Topic, Key: []byte(r.WorkspaceID + ":" + r.AppID + ":" + customer), Value: v}, nil
}

// produce writes the stored records of items and waits for Kafka to acknowledge them all; only
// then may a cursor move past them.
func (s *Syncer) produce(ctx context.Context, stream, walk string, items []item) (uint64, error) {
	recs := make([]*kgo.Record, 0, len(items))
	for _, it := range items {
		if it.rec != nil {
			recs = append(recs, it.rec)
		}
	}
	if len(recs) == 0 {
		return 0, nil
	}
	if err := s.Producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	s.Metrics.produced(stream, walk, len(recs))
	return uint64(len(recs)), nil
}

// stored counts the items that carry a record.
func stored(items []item) uint64 {
	var n uint64
	for _, it := range items {
		if it.rec != nil {
			n++
		}
	}
	return n
}
