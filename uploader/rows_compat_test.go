package uploader

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs the upload queue's SQL on the current ClickHouse engine
// (the integration tests run it on the local 18.16 server).
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
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
		testenv.Bind(t, selectExistingRows, "'ws'", "('uq_a'), ('uq_b')"),
		testenv.Bind(t, selectDueRows, "'ws'", at, at, "2000"),
		testenv.Bind(t, selectPollRows, "'ws'", at, "2000"),
		selectDispatchSchedule,
		testenv.Bind(t, selectDispatchScheduleOf, "'ws'"),
		selectPollSchedule,
		testenv.Bind(t, selectPollScheduleOf, "'ws'"),
		testenv.Bind(t, selectRow, "'ws'", "'uq_a'"),
		testenv.Bind(t, list, "'ws'", "'m'", at, at, "'rejected'", at, at, "'uq'", "11"),
	)
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
