package main

import (
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestUploadQueriesRunOnCurrentClickHouse runs the benchmark's queries (sql.go) on the current
// ClickHouse engine as well (the benchmark itself runs them on the stack's 18.16), over the
// migrated schema and one queue row, with the arguments inlined as the driver binds them.
func TestUploadQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		`INSERT INTO upload_queue (row_id, workspace_id, mapping_id, source_id, event_id_hash, transaction_id, milestone,
acquisition_id, status, created_at, updated_at, version)
SELECT 'uq_1', 'ws', 'm', 'src', 'h', 'rt-1', 'paid', 'acq-p1-000001', 'validated', now(), now(), 1`,
		inline(t, countAcquisitionsSQL, "ws", "src", acqPattern("p1")),
		inline(t, countRowsSQL, statusValidated, "ws", "m", acqPattern("p1")),
		inline(t, rowStatesSQL, "ws", clickhouse.GroupSet{Value: []any{"uq_1", "uq_2"}}),
		activePartsSQL,
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}

// inline replaces each ? with its argument as a SQL literal, as the driver's positional binding does.
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
				b.WriteString(quote(v))
			case clickhouse.GroupSet:
				vals := make([]string, len(v.Value))
				for j, x := range v.Value {
					vals[j] = quote(x.(string))
				}
				b.WriteString("(" + strings.Join(vals, ", ") + ")")
			default:
				t.Fatalf("no literal for %T", v)
			}
		}
	}
	return b.String()
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}
