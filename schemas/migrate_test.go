package schemas

import (
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

// TestReappliedAddColumnIsRecognised simulates a migrator that died after an ADD COLUMN but before
// recording it: running the statement again fails on the server, and that failure counts as done.
func TestReappliedAddColumnIsRecognised(t *testing.T) {
	_, conn := testenv.ClickHouse(t)
	ctx := testenv.Ctx(t)
	if err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (a String) ENGINE = MergeTree ORDER BY a"); err != nil {
		t.Fatal(err)
	}
	const add = "ALTER TABLE t ADD COLUMN scope Enum8('read' = 1, 'admin' = 2) DEFAULT 'read'"
	if err := conn.Exec(ctx, add); err != nil {
		t.Fatal(err)
	}
	err := conn.Exec(ctx, add)
	if err == nil || !alreadyApplied(add, err) {
		t.Fatalf("second ADD COLUMN: %v (recognised: %v)", err, err != nil && alreadyApplied(add, err))
	}
	if alreadyApplied("CREATE TABLE x (a String) ENGINE = Log", err) {
		t.Fatal("only ADD COLUMN statements may be forgiven")
	}
}
