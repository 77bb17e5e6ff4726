package reportingbackfill_test

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/reportingbackfill"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

// TestStatementsRunOnCurrentClickHouse runs every copy's statements, as a run sends them, on the
// current engine (the other tests run them on 18.16), and keeps those of two copies, one with a
// version and a filter-less view, one without a version and with a filter, as a golden file.
func TestStatementsRunOnCurrentClickHouse(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var statements []string
	for _, m := range ms {
		statements = append(statements, m.Statements...)
	}
	statements = append(statements, "SELECT DISTINCT copy FROM "+schemas.CopyBackfillsTable)
	var golden []string
	for _, c := range copiesOf(t) {
		rows, err := conn.Query(testenv.Ctx(t), "SELECT * FROM ("+c.Select+") LIMIT 0")
		if err != nil {
			t.Fatal(err)
		}
		cols := rows.Columns()
		rows.Close()
		st := reportingbackfill.Statements(c, cols)
		statements = append(statements, st...)
		if c.Table == "reporting_events" || c.Table == "reporting_payments" {
			golden = append(golden, "-- "+c.Table+"\n"+strings.Join(st, ";\n\n")+";\n")
		}
	}
	testenv.Golden(t, "testdata/statements.golden.sql", []byte(strings.Join(golden, "\n")))
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
