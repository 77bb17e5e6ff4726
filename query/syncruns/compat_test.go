package syncruns

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs the list on the current ClickHouse engine (store_test.go
// runs it on 18.16), for every app and for one, with the arguments bound as the driver binds them.
// A control statement proves the check can fail.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		testenv.Bind(t, selectRuns, "'ws'", "''", "''", "20"),
		testenv.Bind(t, selectRuns, "'ws'", "'app'", "'app'", "20"),
		"SELECT no_such_column FROM sync_runs",
	)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "no_such_column") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
