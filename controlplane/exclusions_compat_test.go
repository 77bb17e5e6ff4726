package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestExclusionQueriesRunOnCurrentClickHouse runs the customer-exclusion SQL on the current
// ClickHouse engine; the exclusion tests run it on the local 18.16 server.
func TestExclusionQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		insertExclusion+" SELECT workspace_id, shop_domain, app_id, excluded, reason, updated_at, version FROM customer_exclusions WHERE 0")
	reportExcluded := "SELECT customer_id FROM platform_customers WHERE workspace_id = ? AND " + ReportExcludedCondition
	for _, q := range []string{selectExclusions, selectExclusionsByDomain, reportExcluded} {
		statements = append(statements, strings.ReplaceAll(q, "?", "'x'"))
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
