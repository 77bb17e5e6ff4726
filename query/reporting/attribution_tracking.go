package reporting

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// pairKey is two strings hashed by pairKeySQL: an acquisition (source_id, acquisition_id) or a shop
// of an app (app_id, shop domain in lower case). The zero key names nothing.
type pairKey [16]byte

// attributedCustomer is one customer row as read (METRICS 10.1): no pointer, so that 50,000 of
// them cost the garbage collector nothing and a slice of them grows by plain copies.
type attributedCustomer struct {
	key       customerHash
	app       uint8   // 1-based index of its app in the scope's apps (selectAttributionCustomers)
	shop      pairKey // its app and shop domain
	installed uint32  // first install, epoch seconds; 0 when unknown
}

// appList is the covered apps in the order Scope.apps binds them.
func (sc Scope) appList() []string {
	if len(sc.AppIDs) == 0 {
		return []string{""}
	}
	return sc.AppIDs
}

// touch is an acquisition's first touch.
type touch struct {
	firstSeen time.Time
	grp       string
}

// funnelCount is the funnel events attributed to one acquisition (attributed false: to none).
type funnelCount struct {
	attributed                  bool
	acquisition                 pairKey
	installs, trials, converted int64
}

// trackingFacts are the tracking side of an attribution request, as read.
type trackingFacts struct {
	customers    []attributedCustomer
	links        map[pairKey]pairKey // shop → its first link's acquisition
	touches      map[pairKey]touch   // of the linked acquisitions and of the funnel events
	funnel       []funnelCount
	acquisitions map[string]int64     // per channel, first seen in the range
	since        map[string]time.Time // per app, its earliest stored browser event
}

// readTracking reads the tracking facts concurrently, one table per query; customerRow joins each
// customer to its shop's first link and that acquisition's first touch.
func (s *Store) readTracking(ctx context.Context, sc Scope, group string, r Range) (*trackingFacts, error) {
	t := &trackingFacts{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { t.customers, err = s.readAttributionCustomers(gctx, sc); return })
	g.Go(func() (err error) { t.links, err = s.readShopLinks(gctx, sc); return })
	g.Go(func() (err error) { t.touches, err = s.readTouches(gctx, sc, group, r); return })
	g.Go(func() (err error) { t.acquisitions, err = s.readFirstSeen(gctx, sc, group, r); return })
	g.Go(func() (err error) { t.funnel, err = s.readAttributionFunnel(gctx, sc, r); return })
	g.Go(func() (err error) { t.since, err = s.readTrackingSince(gctx, sc); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Store) readTrackingSince(ctx context.Context, sc Scope) (map[string]time.Time, error) {
	rows, err := s.conn.Query(ctx, selectTrackingSince, sc.WorkspaceID, sc.apps(), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read tracking coverage: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			app   string
			first uint32
		)
		if err := rows.Scan(&app, &first); err != nil {
			return nil, fmt.Errorf("read tracking coverage: %w", err)
		}
		if first != 0 {
			out[app] = unix(first)
		}
	}
	return out, rows.Err()
}

func (s *Store) readAttributionCustomers(ctx context.Context, sc Scope) ([]attributedCustomer, error) {
	rows, err := s.conn.Query(ctx, selectAttributionCustomers, sc.appList(), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read attributed customers: %w", err)
	}
	defer rows.Close()
	var out []attributedCustomer
	for rows.Next() {
		var c attributedCustomer
		if err := rows.Scan(&c.key, &c.app, &c.shop, &c.installed); err != nil {
			return nil, fmt.Errorf("read attributed customers: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// readShopLinks reads each shop's first link: shop key → acquisition key.
func (s *Store) readShopLinks(ctx context.Context, sc Scope) (map[pairKey]pairKey, error) {
	rows, err := s.conn.Query(ctx, selectShopLinks, sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read shop links: %w", err)
	}
	defer rows.Close()
	out := map[pairKey]pairKey{}
	for rows.Next() {
		var shop, acq pairKey
		if err := rows.Scan(&shop, &acq); err != nil {
			return nil, fmt.Errorf("read shop links: %w", err)
		}
		out[shop] = acq
	}
	return out, rows.Err()
}

// readTouches reads the first touches of the shops' first links and of the range's funnel events.
func (s *Store) readTouches(ctx context.Context, sc Scope, group string, r Range) (map[pairKey]touch, error) {
	ws, apps := sc.WorkspaceID, sc.apps()
	rows, err := s.conn.Query(ctx, attributionTouchesHead+group+attributionTouchesTail,
		ws, apps, ws, apps, epoch(r.From.Start()), epoch(r.To.End()), ws, apps)
	if err != nil {
		return nil, fmt.Errorf("read first touches: %w", err)
	}
	defer rows.Close()
	out := map[pairKey]touch{}
	for rows.Next() {
		var (
			k     pairKey
			tc    touch
			first uint32
		)
		if err := rows.Scan(&k, &first, &tc.grp); err != nil {
			return nil, fmt.Errorf("read first touches: %w", err)
		}
		tc.firstSeen = unix(first)
		out[k] = tc
	}
	return out, rows.Err()
}

// readFirstSeen counts per channel the acquisitions first seen in r.
func (s *Store) readFirstSeen(ctx context.Context, sc Scope, group string, r Range) (map[string]int64, error) {
	ws, apps := sc.WorkspaceID, sc.apps()
	from := r.From.Start()
	month := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	to := epoch(r.To.End())
	rows, err := s.conn.Query(ctx, attributionSeenHead+group+attributionSeenTail,
		ws, apps, month.Format(time.DateOnly), epoch(from), to, ws, apps, to, epoch(from))
	if err != nil {
		return nil, fmt.Errorf("count acquisitions first seen: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			grp string
			n   uint64
		)
		if err := rows.Scan(&grp, &n); err != nil {
			return nil, fmt.Errorf("count acquisitions first seen: %w", err)
		}
		out[grp] = int64(n)
	}
	return out, rows.Err()
}

func (s *Store) readAttributionFunnel(ctx context.Context, sc Scope, r Range) ([]funnelCount, error) {
	ws := sc.WorkspaceID
	rows, err := s.conn.Query(ctx, selectAttributionFunnel, ws, sc.apps(), epoch(r.From.Start()), epoch(r.To.End()), ws, ws)
	if err != nil {
		return nil, fmt.Errorf("read attribution funnel: %w", err)
	}
	defer rows.Close()
	var out []funnelCount
	for rows.Next() {
		var (
			f                funnelCount
			attributed       uint8
			ins, trial, conv uint64
		)
		if err := rows.Scan(&attributed, &f.acquisition, &ins, &trial, &conv); err != nil {
			return nil, fmt.Errorf("read attribution funnel: %w", err)
		}
		f.attributed = attributed == 1
		f.installs, f.trials, f.converted = int64(ins), int64(trial), int64(conv)
		out = append(out, f)
	}
	return out, rows.Err()
}
