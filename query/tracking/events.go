package tracking

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/revtrack/revtrack/query/budget"
)

// Evidence badges (docs/TRACKING.md, introduction): browser events are not proof of payment; server
// events are verified by the customer's server.
const (
	EvidenceBrowser = "Browser"
	EvidenceServer  = "Server"
)

// Limits of RecentEvents.
const (
	DefaultEventLimit = 50
	MaxEventLimit     = 200
)

// Filter selects recent events of a workspace.
type Filter struct {
	Scope
	// SourceID restricts to one tracking source (optional).
	SourceID string `json:"sourceId,omitempty"`
	// AcquisitionID restricts to one browser: its browser events and the server events attributed
	// to it, by their own acquisition ID or through their shop's link (optional).
	AcquisitionID string `json:"acquisitionId,omitempty"`
	// Name restricts to events of one name: page_view, a custom name or a lifecycle name (optional).
	Name string `json:"name,omitempty"`
	// Shop restricts to one shop: server events naming it (customerRef) and browser events whose
	// embedded-app context carried it (optional).
	Shop string `json:"shop,omitempty"`
	// After continues a listing after the last event of a previous page (EventsPage's NextCursor).
	After *Cursor `json:"-"`
	// From and To bound occurredAt, [From, To); zero values default to the last 30 days.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Limit is 1 to 200; 0 means 50.
	Limit int `json:"limit"`
}

// Event is one browser or server event as the Tracking view shows it.
type Event struct {
	Evidence   string    `json:"evidence"`
	EventID    string    `json:"eventId"`
	SourceID   string    `json:"sourceId"`
	Name       string    `json:"name"`
	OccurredAt time.Time `json:"occurredAt"`
	// AcquisitionID is the browser's ID; for a server event, the acquisition it is attributed to.
	AcquisitionID string `json:"acquisitionId,omitempty"`
	// AcquisitionSourceID is the source that captured a server event's acquisition (another source
	// of the same app when attributed through a shop link).
	AcquisitionSourceID string `json:"acquisitionSourceId,omitempty"`
	// AcquisitionResolvedBy says how a server event was attributed: "event" (its own
	// acquisitionId), "shop_link" (its shop's first linked acquisition) or "" (not attributed).
	AcquisitionResolvedBy string `json:"acquisitionResolvedBy,omitempty"`
	// SessionID is the server-side session of a browser event.
	SessionID string `json:"sessionId,omitempty"`
	// Shop is a server event's customerRef, or a browser event's embedded-app platformShop.
	Shop        string `json:"shop,omitempty"`
	URL         string `json:"url,omitempty"`
	Path        string `json:"path,omitempty"`
	AmountCents *int64 `json:"amountCents,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// FirstTouch is the acquisition's first touch, when its browser history is known.
	FirstTouch *FirstTouch `json:"firstTouch,omitempty"`
}

// RecentEvents returns the newest browser and server events of a workspace, newest first (ties:
// browser before server, then by source and event ID), each duplicate counted once.
func (s *Store) RecentEvents(ctx context.Context, f Filter) ([]Event, error) {
	p, err := s.EventsPage(ctx, f)
	return p.Events, err
}

// EventsPage is RecentEvents with the cursor of the next page: each query reads one event more
// than the page holds, so a page knows whether another follows without a count.
func (s *Store) EventsPage(ctx context.Context, f Filter) (Page, error) {
	events, more, err := s.events(ctx, f)
	p := Page{Events: events}
	if more && len(events) > 0 {
		p.NextCursor = cursorOf(events[len(events)-1]).String()
	}
	return p, err
}

func (s *Store) events(ctx context.Context, f Filter) ([]Event, bool, error) {
	if f.WorkspaceID == "" {
		return nil, false, invalid("workspaceId is required")
	}
	if f.Limit == 0 {
		f.Limit = DefaultEventLimit
	}
	if f.Limit < 1 || f.Limit > MaxEventLimit {
		return nil, false, invalid("limit must be between 1 and %d", MaxEventLimit)
	}
	from, to, err := s.dateRange(f.From, f.To)
	if err != nil {
		return nil, false, err
	}
	if err := budget.Compute(ctx); err != nil {
		return nil, false, err
	}
	browser, err := s.recentBrowser(ctx, f, from, to)
	if err != nil {
		return nil, false, err
	}
	server, err := s.recentServer(ctx, f, from, to)
	if err != nil {
		return nil, false, err
	}
	events := append(browser, server...)
	sort.Slice(events, func(i, j int) bool { return newerFirst(events[i], events[j]) })
	more := len(events) > f.Limit
	if more {
		events = events[:f.Limit]
	}
	if err := s.attachFirstTouches(ctx, f.Scope, events); err != nil {
		return nil, false, err
	}
	return events, more, nil
}

func newerFirst(a, b Event) bool {
	if !a.OccurredAt.Equal(b.OccurredAt) {
		return a.OccurredAt.After(b.OccurredAt)
	}
	if a.Evidence != b.Evidence {
		return a.Evidence < b.Evidence
	}
	if a.SourceID != b.SourceID {
		return a.SourceID < b.SourceID
	}
	return a.EventID < b.EventID
}

// optional appends the filter's optional conditions (constant fragments) and their arguments;
// withAcquisition is true for the browser query, whose acquisition and shop are its own columns
// (a server event's are matched outside FINAL, by recentServerQuery).
func optional(q *strings.Builder, args []any, f Filter, withAcquisition bool) []any {
	if f.SourceID != "" {
		q.WriteString(andSourceID)
		args = append(args, f.SourceID)
	}
	if withAcquisition && f.AcquisitionID != "" {
		q.WriteString(andAcquisitionID)
		args = append(args, f.AcquisitionID)
	}
	if withAcquisition && f.Shop != "" {
		q.WriteString(andPlatformShop)
		args = append(args, f.Shop)
	}
	if f.Name != "" {
		q.WriteString(andName)
		args = append(args, f.Name)
	}
	return append(args, f.After.args(q, withAcquisition)...)
}

// recentBrowserQuery composes the browser events query of a filter.
func recentBrowserQuery(f Filter, from, to time.Time) (string, []any) {
	var q strings.Builder
	q.WriteString(recentBrowserBase)
	args := optional(&q, []any{f.WorkspaceID, f.apps(), epoch(from), epoch(to)}, f, true)
	q.WriteString(recentBrowserEnd)
	return q.String(), append(args, f.Limit+1)
}

// recentServerQuery composes the server events query of a filter. The acquisition is matched
// after FINAL: a later version of an event may attribute it anew.
func recentServerQuery(f Filter, from, to time.Time) (string, []any) {
	var q strings.Builder
	q.WriteString(recentServerBase)
	args := optional(&q, []any{f.WorkspaceID, f.apps(), epoch(from), epoch(to)}, f, false)
	q.WriteString(recentServerOuter)
	if f.AcquisitionID != "" {
		q.WriteString(andAcquisitionID)
		args = append(args, f.AcquisitionID)
	}
	if f.Shop != "" {
		q.WriteString(andShopDomain)
		args = append(args, f.Shop)
	}
	q.WriteString(recentServerEnd)
	return q.String(), append(args, f.Limit+1)
}

func (s *Store) recentBrowser(ctx context.Context, f Filter, from, to time.Time) ([]Event, error) {
	q, args := recentBrowserQuery(f, from, to)
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read recent browser events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev := Event{Evidence: EvidenceBrowser}
		var (
			t  time.Time
			ms uint16
		)
		if err := rows.Scan(&ev.EventID, &ev.SourceID, &ev.AcquisitionID, &ev.SessionID, &ev.Name, &t, &ms, &ev.URL, &ev.Path, &ev.Shop); err != nil {
			return nil, err
		}
		ev.OccurredAt = at(t, ms)
		out = append(out, ev)
	}
	return out, rows.Err()
}

func (s *Store) recentServer(ctx context.Context, f Filter, from, to time.Time) ([]Event, error) {
	q, args := recentServerQuery(f, from, to)
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read recent server events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev := Event{Evidence: EvidenceServer}
		var (
			t  time.Time
			ms uint16
		)
		if err := rows.Scan(&ev.EventID, &ev.SourceID, &ev.Name, &t, &ms, &ev.AcquisitionSourceID, &ev.AcquisitionID,
			&ev.AcquisitionResolvedBy, &ev.Shop, &ev.AmountCents, &ev.Currency); err != nil {
			return nil, err
		}
		ev.OccurredAt = at(t, ms)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// attachFirstTouches adds each event's acquisition first touch with one batched lookup.
func (s *Store) attachFirstTouches(ctx context.Context, sc Scope, events []Event) error {
	seen := map[acquisitionKey]bool{}
	var keys []acquisitionKey
	for _, ev := range events {
		if k, ok := acquisitionOf(ev); ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	touches, err := s.firstTouches(ctx, sc, keys)
	if err != nil {
		return err
	}
	for i := range events {
		if k, ok := acquisitionOf(events[i]); ok {
			events[i].FirstTouch = touches[k]
		}
	}
	return nil
}

func acquisitionOf(ev Event) (acquisitionKey, bool) {
	if ev.AcquisitionID == "" {
		return acquisitionKey{}, false
	}
	if ev.Evidence == EvidenceServer {
		return acquisitionKey{ev.AcquisitionSourceID, ev.AcquisitionID}, true
	}
	return acquisitionKey{ev.SourceID, ev.AcquisitionID}, true
}
