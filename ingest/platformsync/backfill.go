package platformsync

import (
	"context"
	"time"
)

// budget bounds the time one run spends on backward walks (zero: unbounded).
type budget struct{ deadline time.Time }

func newBudget(d time.Duration) budget {
	if d <= 0 {
		return budget{}
	}
	return budget{deadline: time.Now().Add(d)}
}

func (b budget) spent() bool { return !b.deadline.IsZero() && !time.Now().Before(b.deadline) }

// backward fills one stream's history older than its `:start` edge, window by window and newest
// first, each window read backwards from its newest record. After every page the `:start` row
// records the new edge (the oldest instant loaded without gaps) and the cursor to continue from,
// so a later run resumes exactly there. It ends for good at the app's oldest record (origin) or,
// for transactions, at the row limit; done is false when the budget ran out first.
func (s *Syncer) backward(ctx context.Context, ws, app, stream string, b budget, wc walkCtx) (n uint64, done bool, err error) {
	st, ok, err := s.readCursor(ctx, ws, app, stream+startSuffix)
	if err != nil || !ok {
		return 0, false, err
	}
	if finished(st.Cursor) {
		wc.tr.walk(wc.step, stream, "backward", st.WindowEnd, st.WindowEnd)
		return 0, true, nil
	}
	wc.tr.walk(wc.step, stream, "backward", st.WindowEnd, time.Time{})
	progress, edge := parseBackfill(st.Cursor), st.WindowEnd
	first, has, err := s.firstRecordAt(ctx, app, stream)
	if err != nil {
		return 0, false, err
	}
	limit := uint64(0)
	if stream == StreamTransactions {
		limit = s.rowLimit()
	}
	target := edge // nothing older than the edge
	if has {
		target = earliest(first, edge)
	}
	wc.tr.bound(target, limit-min(progress.Loaded, limit), b.deadline)
	log := s.log().With("app_id", app, "stream", stream, "walk", "backward")
	for pages := 0; ; pages++ {
		if !has || !first.Before(edge) {
			// Nothing older than the edge: the walk reached the app's first record.
			at := edge
			if has {
				at = first
			}
			log.Info("backfill reached the first record", "window_end", at, "loaded", progress.Loaded)
			return n, true, s.writeCursor(ctx, ws, app, stream+startSuffix, cursor{Cursor: CursorOrigin, WindowEnd: at})
		}
		if pages > 0 && b.spent() {
			log.Info("backfill budget spent; the next run continues", "window_end", edge, "loaded", progress.Loaded)
			return n, false, nil
		}
		wStart := latest(edge.Add(-s.window()), first)
		// Records are whole seconds: everything at or after the edge is loaded already.
		p, err := s.backwardPage(ctx, ws, app, stream, wStart, edge.Add(-time.Second), progress.Before)
		if err != nil {
			return n, false, err
		}
		items, hitLimit := p.items, false
		if limit > 0 && progress.Loaded+stored(items) >= limit {
			// Keep the newest records up to the limit; the limit is only "hit" if anything older
			// remains unloaded.
			items = newest(items, limit-progress.Loaded)
			hitLimit = len(items) < len(p.items) || p.more || wStart.After(first)
		}
		k, err := s.produce(ctx, stream, "backward", items)
		n += k
		if err != nil {
			return n, false, err
		}
		progress.Loaded += k
		wc.tr.page(k, time.Time{})
		switch {
		case hitLimit:
			at := edge
			if len(items) > 0 {
				at = items[0].at.Truncate(time.Second).Add(time.Second)
			}
			log.Info("backfill reached the row limit", "row_limit", limit, "window_end", at)
			return n, true, s.writeCursor(ctx, ws, app, stream+startSuffix, cursor{Cursor: CursorRowLimit, WindowEnd: at})
		case p.more && len(p.items) > 0:
			// Records of the oldest one's second that sort before it may still be missing.
			edge, progress.Before = p.first().at.Truncate(time.Second).Add(time.Second), p.first().cursor
		default:
			edge, progress.Before = wStart, ""
			log.Debug("sync window loaded", "from", wStart, "loaded", progress.Loaded)
		}
		wc.tr.reach(edge)
		if !first.Before(edge) {
			continue // the loop's first check records origin
		}
		if err := s.writeCursor(ctx, ws, app, stream+startSuffix, cursor{Cursor: progress.String(), WindowEnd: edge}); err != nil {
			return n, false, err
		}
	}
}

func latest(ts ...time.Time) time.Time {
	out := ts[0]
	for _, t := range ts[1:] {
		if t.After(out) {
			out = t
		}
	}
	return out
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// newest returns the suffix of items (ascending) holding the newest k stored records.
func newest(items []item, k uint64) []item {
	var seen uint64
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].rec == nil {
			continue
		}
		if seen == k {
			return items[i+1:]
		}
		seen++
	}
	return items
}
