package schemas

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

// TestMigrationsRunOnCurrentClickHouse applies every migration to the current ClickHouse engine;
// the integration tests apply them to the local 18.16 server. Both must accept them.
func TestMigrationsRunOnCurrentClickHouse(t *testing.T) {
	all, err := MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements := append([]string{MigrationsTableDDL}, all...)
	// A statement current ClickHouse is known to reject proves the check can fail.
	const control = "CREATE TABLE rejected_control (k Nullable(String)) ENGINE = MergeTree ORDER BY k"
	statements = append(statements, control)

	version, failures := testenv.OnCurrentClickHouse(t, statements)
	t.Logf("current ClickHouse engine %s", version)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "rejected_control") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
