package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestSecretQueriesRunOnCurrentClickHouse runs the sealed-secret reads and the deletion mutations
// on the current ClickHouse engine; the secrets tests run them on the local 18.16 server.
func TestSecretQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range SecretQueries() {
		if strings.HasPrefix(q, "INSERT") {
			continue
		}
		literals := []string{"'ad_refresh_token'", "'owner-1'", "18446744073709551615"}[:strings.Count(q, "?")]
		if strings.Count(q, "?") == 1 {
			literals = []string{"'owner-1'"}
		}
		statements = append(statements, testenv.Bind(t, q, literals...))
		n++
	}
	if n != 7 {
		t.Fatalf("%d statements checked; update the count when adding one", n)
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
