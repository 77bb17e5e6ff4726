package reporting

import (
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// TestExportQueriesRunOnCurrentClickHouse: the queries an analyst export sends on ClickHouse 18.16
// (its own and the timeline's) run as sent on the current engine.
func TestExportQueriesRunOnCurrentClickHouse(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	if _, err := e.store.ExportCustomerMRR(ctx(t), scopeOf("app-1"), MustDate("2026-03-31"), func(CustomerMRR) error { return nil }); err != nil {
		t.Fatal(err)
	}
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements, sampleRows...)
	sent := map[string]bool{}
	for _, q := range slices.Sorted(mapKeys(e.rec.queries)) {
		statements = append(statements, inline(t, q, e.rec.queries[q]...))
		for name, c := range map[string]string{"selectMRRDataStart": selectMRRDataStart, "selectExportNames": selectExportNames} {
			if strings.Contains(q, c) {
				sent[name] = true
			}
		}
	}
	if len(sent) != 2 {
		t.Errorf("sent %v, want both of the export's queries", sent)
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
