package tracking

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/query/budget"
)

// MaxJourneyEvents bounds a journey's event list: the newest are kept and Truncated says so. The
// first touch, sessions and shops are computed over everything stored, whatever this bound.
const MaxJourneyEvents = 500

// ErrUnknownAcquisition: no browser or server event of the scope carries the acquisition ID.
var ErrUnknownAcquisition = errors.New("no event of this workspace's selected apps carries this acquisition ID")

// Session is one browser session of an acquisition (a new one after 30 minutes without an event).
type Session struct {
	SessionID string    `json:"sessionId"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
	PageViews uint64    `json:"pageViews"`
	Events    uint64    `json:"events"`
	// LandingPath is the path of the session's first event.
	LandingPath string `json:"landingPath"`
}

// JoinedShop is a shop the acquisition joined: a verified server event carried both the
// acquisition's ID and the shop (customerRef). FirstEvent* is the earliest such event (install, or
// identified for a shop that existed before).
type JoinedShop struct {
	Shop           string    `json:"shop"`
	FirstEventAt   time.Time `json:"firstEventAt"`
	FirstEventName string    `json:"firstEventName"`
}

// Journey is one acquisition's story: its first touch, sessions, every browser event (page views
// and custom events) and verified server event attributed to it, oldest first, and the shops it
// joined.
type Journey struct {
	AcquisitionID string `json:"acquisitionId"`
	// SourceID is the source that captured the browser ("" when only server events carry the ID).
	SourceID string `json:"sourceId"`
	// FirstTouch is nil when no browser history is stored (not arrived yet, or past retention).
	FirstTouch  *FirstTouch  `json:"firstTouch"`
	LandingPath string       `json:"landingPath"`
	Sessions    []Session    `json:"sessions"`
	Shops       []JoinedShop `json:"shops"`
	Events      []Event      `json:"events"`
	// Truncated: more than MaxJourneyEvents events; Events holds the newest of them.
	Truncated bool `json:"truncated"`
}

// Journey reads one acquisition of the scope; sourceID (optional) picks the source when one browser
// was tracked by several, else the earliest seen is taken.
func (s *Store) Journey(ctx context.Context, sc Scope, acquisitionID, sourceID string) (Journey, error) {
	if sc.WorkspaceID == "" {
		return Journey{}, invalid("workspaceId is required")
	}
	if acquisitionID == "" || utf8.RuneCountInString(acquisitionID) > 128 {
		return Journey{}, invalid("the acquisition ID must be 1-128 characters")
	}
	if err := budget.Compute(ctx); err != nil {
		return Journey{}, err
	}
	j := Journey{AcquisitionID: acquisitionID, SourceID: sourceID, Sessions: []Session{}, Shops: []JoinedShop{}, Events: []Event{}}
	ft, src, err := s.journeyAcquisition(ctx, sc, acquisitionID, sourceID)
	if err != nil {
		return j, err
	}
	if ft != nil {
		j.FirstTouch, j.SourceID = ft, src
		if u, err := url.Parse(ft.LandingURL); err == nil {
			j.LandingPath = u.Path
		}
	}
	// Once the source is known the other reads are independent: they run at once, since a person
	// waits for the journey (measured: docs/BENCHMARKS.md, "Console").
	var browser, server []Event
	from, to := time.Unix(0, 0).UTC(), s.now().Add(24*time.Hour).UTC() // a server's clock may run ahead
	g, gctx := errgroup.WithContext(ctx)
	if ft != nil {
		g.Go(func() (err error) {
			j.Sessions, err = s.journeySessions(gctx, sc, j.SourceID, acquisitionID)
			return err
		})
		g.Go(func() (err error) {
			browser, err = s.recentBrowser(gctx, Filter{Scope: sc, SourceID: j.SourceID, AcquisitionID: acquisitionID, Limit: MaxJourneyEvents}, from, to)
			return err
		})
	}
	g.Go(func() (err error) {
		server, err = s.recentServer(gctx, Filter{Scope: sc, AcquisitionID: acquisitionID, Limit: MaxJourneyEvents}, from, to)
		return err
	})
	g.Go(func() (err error) {
		j.Shops, err = s.journeyShops(gctx, sc, acquisitionID, j.SourceID)
		return err
	})
	if err := g.Wait(); err != nil {
		return j, err
	}
	j.mergeEvents(browser, server)
	if j.FirstTouch == nil && len(j.Events) == 0 {
		return j, ErrUnknownAcquisition
	}
	if j.SourceID == "" && len(j.Events) > 0 {
		j.SourceID = j.Events[0].AcquisitionSourceID
	}
	return j, nil
}

func (s *Store) journeyAcquisition(ctx context.Context, sc Scope, id, sourceID string) (*FirstTouch, string, error) {
	q, args := journeyAcquisitionBase, []any{sc.WorkspaceID, sc.apps(), id}
	if sourceID != "" {
		q, args = q+andSourceID, append(args, sourceID)
	}
	rows, err := s.conn.Query(ctx, q+journeyAcquisitionEnd, args...)
	if err != nil {
		return nil, "", fmt.Errorf("read the acquisition: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, "", rows.Err()
	}
	var (
		k  acquisitionKey
		ft FirstTouch
	)
	if err := rows.Scan(&k.SourceID, &k.AcquisitionID, &ft.FirstSeenAt, &ft.LastSeenAt, &ft.PageViews, &ft.TrackerRef,
		&ft.UTMSource, &ft.UTMMedium, &ft.UTMCampaign, &ft.UTMTerm, &ft.UTMContent, &ft.Gclid, &ft.Gbraid, &ft.Wbraid,
		&ft.LandingURL, &ft.Referrer); err != nil {
		return nil, "", err
	}
	ft.FirstSeenAt, ft.LastSeenAt = ft.FirstSeenAt.UTC(), ft.LastSeenAt.UTC()
	return &ft, k.SourceID, nil
}

func (s *Store) journeySessions(ctx context.Context, sc Scope, sourceID, id string) ([]Session, error) {
	rows, err := s.conn.Query(ctx, journeySessions, sc.WorkspaceID, sc.apps(), sourceID, id)
	if err != nil {
		return nil, fmt.Errorf("read the sessions: %w", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		var (
			se          Session
			first, last uint64
		)
		if err := rows.Scan(&se.SessionID, &first, &last, &se.PageViews, &se.Events, &se.LandingPath); err != nil {
			return nil, err
		}
		se.StartedAt, se.EndedAt = time.UnixMilli(int64(first)).UTC(), time.UnixMilli(int64(last)).UTC()
		out = append(out, se)
	}
	return out, rows.Err()
}

// mergeEvents keeps the browser events of the acquisition's source and the server events attributed
// to the acquisition (read over all that is stored), the newest MaxJourneyEvents, in time order.
func (j *Journey) mergeEvents(browser, server []Event) {
	events := browser
	for _, ev := range server {
		// The same ID captured by another source is another acquisition.
		if j.SourceID == "" || ev.AcquisitionSourceID == j.SourceID {
			events = append(events, ev)
		}
	}
	sort.Slice(events, func(a, b int) bool { return newerFirst(events[a], events[b]) })
	if len(events) > MaxJourneyEvents {
		events, j.Truncated = events[:MaxJourneyEvents], true
	}
	for l, r := 0, len(events)-1; l < r; l, r = l+1, r-1 {
		events[l], events[r] = events[r], events[l]
	}
	if events != nil {
		j.Events = events
	}
}

func (s *Store) journeyShops(ctx context.Context, sc Scope, id, sourceID string) ([]JoinedShop, error) {
	q, args := journeyShopsBase, []any{sc.WorkspaceID, sc.apps(), id}
	if sourceID != "" {
		q, args = q+andAcquisitionSourceID, append(args, sourceID)
	}
	rows, err := s.conn.Query(ctx, q+journeyShopsEnd, args...)
	if err != nil {
		return nil, fmt.Errorf("read the joined shops: %w", err)
	}
	defer rows.Close()
	out := []JoinedShop{}
	for rows.Next() {
		var (
			sh    JoinedShop
			first uint64
		)
		if err := rows.Scan(&sh.Shop, &first, &sh.FirstEventName); err != nil {
			return nil, err
		}
		sh.FirstEventAt = time.UnixMilli(int64(first)).UTC()
		out = append(out, sh)
	}
	return out, rows.Err()
}
