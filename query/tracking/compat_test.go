package tracking

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs every query of the store, in every composition, on the
// current ClickHouse engine (the other tests run them on 18.16), over a few rows written through
// the materialized views, with the arguments inlined the way the driver's client-side binding does.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_tracker_ref, first_gclid)
SELECT 'e1', 'src', 'ws', 'app', 'acq', 'page_view', toDateTime('2026-11-10 10:00:00', 'UTC'), 'ref', 'g'`,
		`INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, acquisition_source_id, acquisition_id,
acquisition_resolved_by, shop_domain, amount_cents, currency, version)
SELECT 'ws', 'src', 'app', 's1', 'paid', toDateTime('2026-11-10 11:00:00', 'UTC'), 'src', 'acq', 'shop_link', 'shop.example', 100, 'USD', 1`,
		`INSERT INTO server_events (event_id, source_id, workspace_id, app_id, name, occurred_at, received_at)
SELECT 's1', 'src', 'ws', 'app', 'paid', toDateTime('2026-11-10 11:00:00', 'UTC'), toDateTime('2026-11-10 11:00:01', 'UTC')`,
	)
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	set := []clickhouse.GroupSet{{Value: []any{"src", "acq"}}, {Value: []any{"src", "other"}}}
	add := func(q string, args ...any) { statements = append(statements, inline(t, q, args...)) }
	addComposed := func(q string, args []any) { add(q, args...) }

	add(selectFirstTouches, "ws", scope.apps(), set)
	browserAt := &Cursor{AtMs: 1762768800000, Evidence: EvidenceBrowser, SourceID: "src", EventID: "e1"}
	serverAt := &Cursor{AtMs: 1762768800000, Evidence: EvidenceServer, SourceID: "src", EventID: "s1"}
	for _, f := range []Filter{{Scope: scope, Limit: 10}, {Scope: scope, SourceID: "src", AcquisitionID: "acq", Limit: 10},
		{Scope: scope, Name: "paid", Shop: "shop.example", After: browserAt, Limit: 10}, {Scope: scope, After: serverAt, Limit: 10}} {
		addComposed(recentBrowserQuery(f, from, to))
		addComposed(recentServerQuery(f, from, to))
	}
	add(troubleshootBrowser, "ws", scope.apps(), "src", epoch(from))
	add(troubleshootServer, "ws", scope.apps(), "src", epoch(from))
	add(troubleshootClickAttributed, "ws", scope.apps(), "src", epoch(from), "ws", scope.apps())
	for dim, column := range funnelGroupColumns {
		for _, source := range []string{"", "src"} {
			addComposed(funnelQuery(FunnelFilter{Scope: scope, SourceID: source, Dimension: dim, Window: DefaultFunnelWindow}, column, from, to))
		}
	}
	add(selectLedger, "ws", scope.apps(), epoch(from), epoch(to), "ws", scope.apps())
	add(journeyAcquisitionBase+journeyAcquisitionEnd, "ws", scope.apps(), "acq")
	add(journeyAcquisitionBase+andSourceID+journeyAcquisitionEnd, "ws", scope.apps(), "acq", "src")
	add(journeySessions, "ws", scope.apps(), "src", "acq")
	add(journeyShopsBase+andAcquisitionSourceID+journeyShopsEnd, "ws", scope.apps(), "acq", "src")

	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}

// inline replaces each ? with its argument as a SQL literal, as the driver's positional binding
// does. The store's queries contain no other question mark.
func inline(t *testing.T, q string, args ...any) string {
	t.Helper()
	parts := strings.Split(q, "?")
	if len(parts) != len(args)+1 {
		t.Fatalf("%d placeholders, %d arguments in %s", len(parts)-1, len(args), q)
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(args) {
			b.WriteString(literal(t, args[i]))
		}
	}
	return b.String()
}

func literal(t *testing.T, v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `'`, `\'`) + "'"
	case int, int64, uint64:
		return fmt.Sprint(v)
	case []string:
		vals := make([]string, len(v))
		for i, x := range v {
			vals[i] = literal(t, x)
		}
		return "[" + strings.Join(vals, ", ") + "]"
	case []clickhouse.GroupSet:
		tuples := make([]string, len(v))
		for i, g := range v {
			vals := make([]string, len(g.Value))
			for j, x := range g.Value {
				vals[j] = literal(t, x)
			}
			tuples[i] = "(" + strings.Join(vals, ", ") + ")"
		}
		return strings.Join(tuples, ", ")
	}
	t.Fatalf("no literal for %T", v)
	return ""
}
