package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestIdentityAndRetentionQueriesRunOnCurrentClickHouse runs the identity join's and the retention
// job's SQL on the current ClickHouse engine (the integration tests run it on 18.16), after rows
// went through both materialized views, so the views' SELECTs run too.
func TestIdentityAndRetentionQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{insertAcquisitionLinks, insertFunnelEvents} {
		table := strings.Fields(q)[2]
		cols := q[strings.Index(q, "(")+1 : strings.LastIndex(q, ")")]
		statements = append(statements, q+" SELECT "+cols+" FROM "+table+" WHERE 0")
	}
	statements = append(statements,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_tracker_ref)
SELECT 'e1', 'src', 'ws', 'app', 'acq', 'page_view', toDateTime('2020-01-05 00:00:00', 'UTC'), 'ref'`,
		`INSERT INTO acquisition_links (source_id, acquisition_id, workspace_id, app_id, shop_domain, first_event_id, linked_at, version)
SELECT 'src', 'acq', 'ws', 'app', 'shop.example', 'e1', toDateTime('2020-01-05 00:00:00', 'UTC'), 1`,
		strings.ReplaceAll(selectShopLinks, "IN (?)", "IN (('ws', 'app', 'shop.example'), ('ws', 'app', 'other.example'))"),
		strings.ReplaceAll(selectShopFunnelRows, "IN (?)", "IN (('ws', 'app', 'shop.example'), ('ws', 'app', 'other.example'))"),
		strings.ReplaceAll(selectRetainedPartitions, "?", "['acquisitions', 'browser_events']"),
		strings.ReplaceAll(countUploadIdentifiers, "?", "1600000000"),
		strings.ReplaceAll(scrubUploadIdentifiers, "?", "1600000000"),
		"ALTER TABLE browser_events DROP PARTITION 202001",
		"ALTER TABLE acquisitions DROP PARTITION 202001",
		"ALTER TABLE funnel_events DROP PARTITION 201901", // no such partition: a no-op, not an error
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
