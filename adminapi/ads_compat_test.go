package adminapi

import (
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestVerificationQueriesRunOnCurrentClickHouse runs the verification SQL on the current
// ClickHouse engine (the HTTP tests run it on the local 18.16 server).
func TestVerificationQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, name, occurred_at) SELECT 'b1', 'src', 'ws', 'app', 'page_view', toDateTime('2026-11-10 10:00:00', 'UTC')`,
		`INSERT INTO server_events (event_id, source_id, workspace_id, app_id, name, occurred_at, received_at) SELECT 's1', 'src', 'ws', 'app', 'paid', toDateTime('2026-11-10 11:00:00', 'UTC'), toDateTime('2026-11-10 11:00:01', 'UTC')`,
		`INSERT INTO upload_queue (row_id, workspace_id, mapping_id, click_id_type, status, reason_codes, created_at, version) SELECT 'uq', 'ws', 'm', 'gclid', 'accepted', ['R'], toDateTime('2026-11-10 11:00:00', 'UTC'), 1`,
		testenv.Bind(t, verifyPageViews, "'ws'", "['src', 'other']"),
		testenv.Bind(t, verifyServerEvents, "'ws'", "['src', 'other']"),
		testenv.Bind(t, verifyQueue, "'ws'"),
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
