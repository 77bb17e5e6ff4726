package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestPlatformQueriesRunOnCurrentClickHouse checks the platform landing inserts and the syncer's
// SQL on the current engine (the integration tests run them on 18.16), with a control statement
// the current engine rejects to prove the check can fail.
func TestPlatformQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	inserts := []string{insertPlatformTransactions, insertPlatformLifecycleEvents}
	for _, q := range platformsync.Queries() {
		if strings.HasPrefix(q, "INSERT") {
			inserts = append(inserts, q)
		} else {
			statements = append(statements, strings.NewReplacer("?", "'x'").Replace(q))
		}
	}
	for _, q := range inserts {
		table := strings.Fields(q)[2]
		cols := q[strings.Index(q, "(")+1 : strings.LastIndex(q, ")")]
		statements = append(statements, q+" SELECT "+cols+" FROM "+table+" WHERE 0")
	}
	const control = "SELECT no_such_column FROM sync_cursors"
	statements = append(statements, control)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "no_such_column") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
