package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestAdsQueriesRunOnCurrentClickHouse runs the advertising selects on the current ClickHouse
// engine; the ads tests run them on the local 18.16 server.
func TestAdsQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range AdsQueries() {
		if strings.HasPrefix(q, "SELECT") {
			statements = append(statements, strings.ReplaceAll(q, "?", "'x'"))
			n++
		}
	}
	if n != 5 {
		t.Fatalf("%d selects checked; update the count when adding one", n)
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
