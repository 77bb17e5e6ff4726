// Package tracking is the read side of acquisition tracking: recent events, troubleshooting
// states, the sequential funnel and the commission ledger, read from ClickHouse for the query
// edge. Its types carry lowerCamelCase JSON tags because they become REST and MCP bodies.
//
// Attribution is resolved at query time: a server event's acquisition is resolved when it is
// written (funnel_events), but its first touch (tracker_ref, UTM, click IDs) is joined from
// acquisitions when read, so browser history that lands after the server event still attributes
// it. Every result has a deterministic order.
package tracking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Conn is the part of a ClickHouse connection the store needs.
type Conn interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
}

var _ Conn = (driver.Conn)(nil)

// ErrInvalidFilter marks a request the store refuses before querying (a 400 for the REST edge).
var ErrInvalidFilter = errors.New("invalid filter")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidFilter, fmt.Sprintf(format, a...))
}

// Scope is what a caller may read: one workspace, and within it only its selected apps' data
// (every query filters on both).
type Scope struct {
	WorkspaceID string   `json:"workspaceId"`
	AppIDs      []string `json:"appIds"`
}

// apps binds the app filter, `has(?, app_id)` (an array literal binds the same way on every
// ClickHouse version, where an IN list does not). A scope without a selected app reads nothing: it
// binds one empty ID, which no row has, since an empty literal array has no element type.
func (sc Scope) apps() []string {
	if len(sc.AppIDs) == 0 {
		return []string{""}
	}
	return sc.AppIDs
}

// DefaultRange is the tracking views' default range: the last 30 days, as for reporting
// (docs/METRICS.md 1.2).
const DefaultRange = 30 * 24 * time.Hour

// Store reads tracking data. It never writes.
type Store struct {
	conn Conn
	now  func() time.Time
}

// New returns a store over conn.
func New(conn Conn) *Store { return &Store{conn: conn, now: time.Now} }

// dateRange fills a missing end with now and a missing start with DefaultRange before the end.
func (s *Store) dateRange(from, to time.Time) (time.Time, time.Time, error) {
	if to.IsZero() {
		to = s.now()
	}
	if from.IsZero() {
		from = to.Add(-DefaultRange)
	}
	if !from.Before(to) {
		return from, to, invalid("from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from.UTC(), to.UTC(), nil
}

// epoch binds a time as whole seconds for toDateTime(?): unambiguous whatever the server's time
// zone, on every ClickHouse version.
func epoch(t time.Time) int64 { return t.Unix() }

// at joins a DateTime and its millisecond column.
func at(t time.Time, ms uint16) time.Time {
	return t.UTC().Add(time.Duration(ms) * time.Millisecond)
}

// FirstTouch is an acquisition's first touch: what its earliest browser event carried.
type FirstTouch struct {
	FirstSeenAt time.Time `json:"firstSeenAt"`
	LastSeenAt  time.Time `json:"lastSeenAt"`
	PageViews   uint64    `json:"pageViews"`
	TrackerRef  string    `json:"trackerRef,omitempty"`
	UTMSource   string    `json:"utmSource,omitempty"`
	UTMMedium   string    `json:"utmMedium,omitempty"`
	UTMCampaign string    `json:"utmCampaign,omitempty"`
	UTMTerm     string    `json:"utmTerm,omitempty"`
	UTMContent  string    `json:"utmContent,omitempty"`
	Gclid       string    `json:"gclid,omitempty"`
	Gbraid      string    `json:"gbraid,omitempty"`
	Wbraid      string    `json:"wbraid,omitempty"`
	LandingURL  string    `json:"landingUrl,omitempty"`
	Referrer    string    `json:"referrer,omitempty"`
}

// acquisitionKey identifies an acquisition: its ID within the source that captured it.
type acquisitionKey struct{ SourceID, AcquisitionID string }

// lookupChunk acquisitions per lookup keep the bound IN list well under max_query_size.
const lookupChunk = 1000

// firstTouches reads the first touch of the given acquisitions of a workspace; unknown ones are
// absent from the result.
func (s *Store) firstTouches(ctx context.Context, sc Scope, keys []acquisitionKey) (map[acquisitionKey]*FirstTouch, error) {
	out := map[acquisitionKey]*FirstTouch{}
	for start := 0; start < len(keys); start += lookupChunk {
		part := keys[start:min(start+lookupChunk, len(keys))]
		set := make([]clickhouse.GroupSet, len(part))
		for i, k := range part {
			set[i] = clickhouse.GroupSet{Value: []any{k.SourceID, k.AcquisitionID}}
		}
		if err := s.firstTouchChunk(ctx, sc, set, out); err != nil {
			return nil, fmt.Errorf("read first touches: %w", err)
		}
	}
	return out, nil
}

func (s *Store) firstTouchChunk(ctx context.Context, sc Scope, set []clickhouse.GroupSet, out map[acquisitionKey]*FirstTouch) error {
	rows, err := s.conn.Query(ctx, selectFirstTouches, sc.WorkspaceID, sc.apps(), set)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k  acquisitionKey
			ft FirstTouch
		)
		if err := rows.Scan(&k.SourceID, &k.AcquisitionID, &ft.FirstSeenAt, &ft.LastSeenAt, &ft.PageViews, &ft.TrackerRef,
			&ft.UTMSource, &ft.UTMMedium, &ft.UTMCampaign, &ft.UTMTerm, &ft.UTMContent, &ft.Gclid, &ft.Gbraid, &ft.Wbraid,
			&ft.LandingURL, &ft.Referrer); err != nil {
			return err
		}
		ft.FirstSeenAt, ft.LastSeenAt = ft.FirstSeenAt.UTC(), ft.LastSeenAt.UTC()
		out[k] = &ft
	}
	return rows.Err()
}
