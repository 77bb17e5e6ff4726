package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestPartnerQueriesRunOnCurrentClickHouse runs the partner-connection selects on the current
// ClickHouse engine; the partner tests run them on the local 18.16 server.
func TestPartnerQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range PartnerQueries() {
		if strings.HasPrefix(q, "SELECT") {
			statements = append(statements, strings.ReplaceAll(q, "?", "'x'"))
		}
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
