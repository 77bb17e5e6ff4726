package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestUserQueriesRunOnCurrentClickHouse runs the people and one-time-link queries (users_sql.go)
// on the current ClickHouse engine; the tests of adminapi run them on the local server.
func TestUserQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{selectUser, selectMemberships, selectMemberList, selectUserToken} {
		statements = append(statements, strings.ReplaceAll(q, "?", "'x'"))
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
