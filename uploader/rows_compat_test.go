package uploader

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// bind replaces each ? of q with the next literal, as the driver's client-side binding does.
func bind(t *testing.T, q string, literals ...string) string {
	t.Helper()
	if strings.Count(q, "?") != len(literals) {
		t.Fatalf("%d placeholders, %d literals in %s", strings.Count(q, "?"), len(literals), q)
	}
	for _, l := range literals {
		q = strings.Replace(q, "?", l, 1)
	}
	return q
}

// TestQueriesRunOnCurrentClickHouse runs the upload queue's SQL on the current ClickHouse engine
// (the integration tests run it on the local 18.16 server).
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var statements []string
	for _, m := range ms {
		statements = append(statements, m.Statements...)
	}
	cols := insertRow[strings.Index(insertRow, "(")+1 : strings.LastIndex(insertRow, ")")]
	statements = append(statements, insertRow+" SELECT "+cols+" FROM upload_queue WHERE 0")
	at := "toDateTime('2026-11-20 12:00:00', 'UTC')"
	list, _, err := listQuery("ws", ListFilter{Status: StatusRejected, MappingID: "m", From: time.Unix(1, 0), To: time.Unix(2, 0),
		Cursor: encodeCursor(time.Unix(1, 0), "uq")})
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements,
		bind(t, selectExistingRows, "'ws'", "('uq_a'), ('uq_b')"),
		bind(t, selectDueRows, "'ws'", at, at, "2000"),
		bind(t, selectPollRows, "'ws'", at, "2000"),
		selectDispatchSchedule,
		bind(t, selectDispatchScheduleOf, "'ws'"),
		selectPollSchedule,
		bind(t, selectPollScheduleOf, "'ws'"),
		bind(t, selectRow, "'ws'", "'uq_a'"),
		bind(t, list, "'ws'", "'m'", at, at, "'rejected'", at, at, "'uq'", "11"),
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
