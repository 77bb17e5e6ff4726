// Package reporting is the read side of subscription reporting: the workspace summary, focused
// metrics, the customer list and the customer detail, computed from the synced platform tables as
// docs/METRICS.md defines. Its types carry lowerCamelCase JSON tags because they become REST and MCP
// bodies.
//
// The work is split where it is cheapest: ClickHouse de-duplicates and reduces rows to compact
// facts (per charge, per customer and currency, per currency), and Go evaluates the billing rules
// of METRICS 2 over those facts (billing.go), so that the rules have one implementation whatever
// read path fed them. Every read is scoped to one workspace and its covered apps.
package reporting

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
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

// Errors the query edge maps to statuses.
var (
	// ErrNotFound: an unknown metric, or a customer that is not in the covered apps.
	ErrNotFound = errors.New("not found in this workspace")
	// ErrInvalid: a request the store refuses before reading (a 400).
	ErrInvalid = errors.New("invalid request")
)

// AmbiguousError is a shop domain that names customers in several covered apps (a 409): the caller
// retries with one of the IDs.
type AmbiguousError struct {
	Domain      string
	CustomerIDs []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("the shop domain %q matches customers in several apps (%s); retry with a customer ID",
		e.Domain, strings.Join(e.CustomerIDs, ", "))
}

// Scope is what a request may read: one workspace and, within it, the covered apps (the selected
// apps, or the one named by appId).
type Scope struct {
	WorkspaceID string
	AppIDs      []string
}

// apps binds the app filter as `app_id IN ?`: a tuple literal, which uses the primary key on every
// ClickHouse version. A scope without an app binds one empty ID, which no row has.
func (sc Scope) apps() clickhouse.GroupSet {
	ids := sc.AppIDs
	if len(ids) == 0 {
		ids = []string{""}
	}
	vals := make([]any, len(ids))
	for i, id := range ids {
		vals[i] = id
	}
	return clickhouse.GroupSet{Value: vals}
}

// CustomerScope selects the customers whose rows enter aggregates (METRICS 1.3).
type CustomerScope string

const (
	ScopeIncluded CustomerScope = "included"
	ScopeExcluded CustomerScope = "excluded"
	ScopeAll      CustomerScope = "all"
)

// ParseCustomerScope reads the customerScope parameter; "" is the default, included.
func ParseCustomerScope(s string) (CustomerScope, error) {
	switch CustomerScope(s) {
	case "":
		return ScopeIncluded, nil
	case ScopeIncluded, ScopeExcluded, ScopeAll:
		return CustomerScope(s), nil
	}
	return "", fmt.Errorf("%w: customerScope must be one of included, excluded, all", ErrInvalid)
}

// admits reports whether a customer with the given exclusion flag is in the scope.
func (cs CustomerScope) admits(excluded bool) bool {
	switch cs {
	case ScopeExcluded:
		return excluded
	case ScopeAll:
		return true
	}
	return !excluded
}

// Store reads reporting data. It never writes.
type Store struct {
	conn  Conn
	log   *slog.Logger
	now   func() time.Time
	cache *resultCache // nil: every response is computed (cache.go)
	sizes sync.Map     // a reading and its scope → the rows its last answer had (sizeHint)
}

// Option configures a Store.
type Option func(*Store)

// WithLogger logs reads that degrade a response instead of failing it (usage activity).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a store over conn.
func New(conn Conn, opts ...Option) *Store {
	s := &Store{conn: conn, log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: time.Now, cache: newResultCache(DefaultCacheEntries)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// epoch binds an instant as whole seconds for toDateTime(?): unambiguous whatever the server's
// time zone, on every ClickHouse version.
func epoch(t time.Time) int64 { return t.Unix() }

// epochDay is the day (since the epoch, UTC) of the start of a day, as reporting_customer_days keys
// its rows.
func epochDay(t time.Time) int64 { return t.Unix() / 86400 }

// unix reads an epoch-seconds column; 0 (SQL null mapped by ifNull, or no matching row) is zero.
func unix(v uint32) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(int64(v), 0).UTC()
}

// customerHash is a customer's public ID as the ten bytes behind its hex (customerKeySQL): the
// summary's map key, scanned from a FixedString(10) without an allocation.
type customerHash [10]byte

// UnmarshalBinary is how the driver scans a FixedString into it.
func (h *customerHash) UnmarshalBinary(b []byte) error {
	if len(b) != len(h) {
		return fmt.Errorf("customer key of %d bytes", len(b))
	}
	copy(h[:], b)
	return nil
}

// hashOf is the customerHash of a public ID; ok is false for anything else.
func hashOf(publicID string) (h customerHash, ok bool) {
	raw, found := strings.CutPrefix(publicID, "cus_")
	if !found || hex.DecodedLen(len(raw)) != len(h) {
		return h, false
	}
	_, err := hex.Decode(h[:], []byte(raw))
	return h, err == nil
}

// customerPair is a customer as the platform tables name it.
type customerPair struct{ AppID, CustomerID string }

// pairSet binds customers as `(app_id, customer_id) IN (?)`.
func pairSet(ps []customerPair) []clickhouse.GroupSet {
	set := make([]clickhouse.GroupSet, len(ps))
	for i, p := range ps {
		set[i] = clickhouse.GroupSet{Value: []any{p.AppID, p.CustomerID}}
	}
	return set
}

// idSet binds public IDs as `public_id IN ?`: a tuple literal.
func idSet(ids []string) clickhouse.GroupSet {
	vals := make([]any, len(ids))
	for i, id := range ids {
		vals[i] = id
	}
	return clickhouse.GroupSet{Value: vals}
}

// stmt composes a query from constant fragments and their arguments, in order.
type stmt struct {
	b    strings.Builder
	args []any
}

func (s *stmt) add(fragment string, args ...any) *stmt {
	s.b.WriteString(fragment)
	s.args = append(s.args, args...)
	return s
}

func (s *stmt) query() (string, []any) { return s.b.String(), s.args }

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sizeHint is how many rows the last reading named what gave for the scope, so that the next one
// allocates its slices once; 0 the first time.
func (s *Store) sizeHint(what string, sc Scope) int {
	if v, ok := s.sizes.Load(what + "|" + sc.WorkspaceID + "|" + strings.Join(sc.AppIDs, ",")); ok {
		n := v.(int)
		return n + n/16
	}
	return 0
}

// keepSizeHint remembers n for sizeHint.
func (s *Store) keepSizeHint(what string, sc Scope, n int) {
	s.sizes.Store(what+"|"+sc.WorkspaceID+"|"+strings.Join(sc.AppIDs, ","), n)
}

// parseKeys appends to out the numbers of a comma-separated list (the charge facts' state event
// keys, sent as text for the reason parseNumbers gives).
func parseKeys(s string, out []uint64) []uint64 { return parseNumbers(s, out) }

// parseInstants appends to out the epoch seconds of a comma-separated list (the charge facts'
// payments and uninstalls, sent as text for the reason parseNumbers gives).
func parseInstants(s string, out []uint32) []uint32 { return parseNumbers(s, out) }

// parseNumbers appends to out the numbers of a comma-separated list of decimals. Arrays are sent
// as text because the driver decodes an array element by element through reflection, which cost
// more than ClickHouse's whole read for a year of payments.
func parseNumbers[T uint32 | uint64](s string, out []T) []T {
	var v T
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' {
			out, v = append(out, v), 0
		} else {
			v = v*10 + T(c-'0')
		}
	}
	if len(s) > 0 {
		out = append(out, v)
	}
	return out
}
