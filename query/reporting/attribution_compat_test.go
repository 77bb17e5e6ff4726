package reporting

import (
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// attributionSQL are the query constants of attribution_sql.go; the test checks that each one was
// sent, so a new constant cannot escape it.
var attributionSQL = map[string]string{
	"attributionTouchesHead": attributionTouchesHead, "attributionTouchesTail": attributionTouchesTail,
	"attributionSeenHead": attributionSeenHead, "attributionSeenTail": attributionSeenTail, "selectTrackingSince": selectTrackingSince,
	"selectAttributionCustomers": selectAttributionCustomers, "selectShopLinks": selectShopLinks,
	"selectAttributionFunnel": selectAttributionFunnel, "selectCustomerRevenue": selectCustomerRevenue,
}

// attributionSampleRows give the tracking tables a row each (the platform tables get sampleRows').
var attributionSampleRows = []string{
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, received_at, first_utm_campaign,
first_gclid, first_landing_url)
SELECT 'b1', 'src', 'ws', 'app-1', 'acq', 'page_view', toDateTime('2026-03-05 00:00:00', 'UTC'), now(), 'spring', 'g', 'https://a.example/p?q=1'`,
	`INSERT INTO acquisition_links (source_id, acquisition_id, workspace_id, app_id, shop_domain, first_event_id, linked_at, version)
SELECT 'src', 'acq', 'ws', 'app-1', 'a.myshopify.com', 'e1', toDateTime('2026-03-05 00:00:00', 'UTC'), 1`,
	`INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, acquisition_source_id, acquisition_id,
acquisition_resolved_by, shop_domain, version)
SELECT 'ws', 'src', 'app-1', 'e1', 'install', toDateTime('2026-03-05 00:00:00', 'UTC'), 'src', 'acq', 'event', 'a.myshopify.com', 1`,
}

// TestAttributionQueriesRunOnCurrentClickHouse sends attribution requests of every groupBy through
// the store on ClickHouse 18.16, recording each query, then runs exactly those queries on the
// current engine over the migrated schema and a row of every table read.
func TestAttributionQueriesRunOnCurrentClickHouse(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	e.fx.Flush(t)
	store := New(e.rec, WithClock(reportingtest.Clock))
	for _, g := range AttributionGroups {
		if _, err := store.Attribution(ctx(t), AttributionRequest{Scope: scopeOf("app-1", "app-2"), Range: defaultRange, GroupBy: g}); err != nil {
			t.Fatal(err)
		}
	}
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(append(statements, sampleRows...), attributionSampleRows...)
	sent := map[string]bool{}
	for _, q := range slices.Sorted(func(yield func(string) bool) {
		for q := range e.rec.queries {
			if !yield(q) {
				return
			}
		}
	}) {
		statements = append(statements, inline(t, q, e.rec.queries[q]...))
		for name, c := range attributionSQL {
			if strings.Contains(q, c) {
				sent[name] = true
			}
		}
	}
	for name := range attributionSQL {
		if !sent[name] {
			t.Errorf("%s was never sent, so it is not checked on the current engine", name)
		}
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
