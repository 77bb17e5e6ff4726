package platformsync

import (
	"fmt"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs every statement of the package on the current ClickHouse
// engine (the integration tests run them on 18.16), over a run row, with the arguments inlined the
// way the driver's client-side binding does; inserts are checked as INSERT … SELECT of their own
// columns. A control statement proves the check can fail.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{insertCursor, insertSyncRuns} {
		table := strings.Fields(q)[2]
		cols := q[strings.Index(q, "(")+1 : strings.LastIndex(q, ")")]
		statements = append(statements, q+" SELECT "+cols+" FROM "+table+" WHERE 0")
	}
	statements = append(statements,
		`INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, events_count, transactions_count,
coverage_from, coverage_through, truncated, error, version)
SELECT 'r1', 'ws', 'app', 'manual', 'succeeded', toDateTime('2026-11-10 10:00:00', 'UTC'), toDateTime('2026-11-10 10:05:00', 'UTC'),
1, 2, NULL, toDateTime('2026-11-10 10:00:00', 'UTC'), 0, '', 1`,
		inline(t, selectCursor, "ws", "app", "transactions"),
		inline(t, selectRunning, "ws", "app"),
		inline(t, selectLastStarted, "ws", "app"),
		"SELECT no_such_column FROM sync_runs",
	)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "no_such_column") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}

func inline(t *testing.T, q string, args ...any) string {
	t.Helper()
	parts := strings.Split(q, "?")
	if len(parts) != len(args)+1 {
		t.Fatalf("%d placeholders, %d arguments in %s", len(parts)-1, len(args), q)
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(args) {
			switch v := args[i].(type) {
			case string:
				b.WriteString("'" + strings.ReplaceAll(v, "'", `\'`) + "'")
			default:
				b.WriteString(fmt.Sprint(v))
			}
		}
	}
	return b.String()
}
