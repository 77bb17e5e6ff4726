package analystmrr

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestStatementsRunOnCurrentClickHouse: the job's reads and writes (sent on ClickHouse 18.16 by the
// other tests) run on the current engine too, with their arguments inlined: a generation written
// and recorded, the generations read, a superseded one deleted.
func TestStatementsRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		insertSpans+` SELECT 'ws', 'app-1', 1, 'cus_1', 'c-1', 'one.example', 'USD', toDate('2026-03-01'), toDate('2026-03-03'), 4900, 4900, 0, 1, 0,
toDateTime('2026-03-31 12:00:00', 'UTC')`,
		insertMovements+` SELECT 'ws', 'app-1', 1, 'cus_1', 'c-1', 'one.example', 'USD', toDate('2026-03-01'), 'new', 4900, 0, 4900, 0,
toDateTime('2026-03-31 12:00:00', 'UTC')`,
		insertGeneration+` SELECT 'ws', 'app-1', 1, toDateTime('2026-03-31 12:00:00', 'UTC'), toDate('2026-03-31'), 'v1', 1, 1, 1`,
		selectGenerations,
		"SELECT throwIf(count() != 3) FROM analyst_customer_mrr_daily",
		deleteSpansHead+bind(deleteCondition, "'ws'", "'app-1'", "1")+deleteOr+bind(deleteCondition, "'ws'", "'app-2'", "7"),
		deleteMovementsHead+bind(deleteCondition, "'ws'", "'app-1'", "1"),
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}

// bind replaces the placeholders of a statement with literals, in order.
func bind(q string, literals ...string) string {
	for _, l := range literals {
		q = strings.Replace(q, "?", l, 1)
	}
	return q
}
