package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs the processors' SQL on the current ClickHouse engine; the
// consumer tests run it on the local 18.16 server. An insert is checked as INSERT … SELECT of its
// own columns, which fails if a column is missing or misnamed.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{insertServerEvents, insertBrowserEvents, insertSessions, insertSessionState} {
		table := strings.Fields(q)[2]
		cols := q[strings.Index(q, "(")+1 : strings.LastIndex(q, ")")]
		statements = append(statements, q+" SELECT "+cols+" FROM "+table+" WHERE 0")
	}
	statements = append(statements, strings.ReplaceAll(selectSessionStates, "IN (?)", "IN (('src', 'acq'), ('src', 'acq2'))"))
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
