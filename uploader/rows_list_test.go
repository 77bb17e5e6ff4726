package uploader

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
)

// TestListQueryGolden records the SQL of List with every filter (a contract surface) and the
// queries of the dispatcher and the poller.
func TestListQueryGolden(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	q, args, err := listQuery("ws-1", ListFilter{Status: StatusRejected, MappingID: "m-1", From: from, To: from.AddDate(0, 1, 0),
		Limit: 10, Cursor: encodeCursor(from.Add(time.Hour), "uq_x")})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- List, every filter; args %v\n%s;\n\n", args, q)
	for _, s := range []struct{ name, q string }{{"due rows", selectDueRows}, {"poll rows", selectPollRows},
		{"existing rows", selectExistingRows}, {"dispatch schedule", selectDispatchSchedule},
		{"dispatch schedule of a workspace", selectDispatchScheduleOf}, {"poll schedule", selectPollSchedule},
		{"poll schedule of a workspace", selectPollScheduleOf}} {
		fmt.Fprintf(&b, "-- %s\n%s;\n\n", s.name, s.q)
	}
	testenv.Golden(t, "testdata/queries.golden.sql", []byte(b.String()))

	q, args, err = listQuery("ws-1", ListFilter{})
	if err != nil || strings.Contains(q, "mapping_id = ?") || strings.Contains(q, "l_status = ?") || len(args) != 2 ||
		args[1] != DefaultListLimit+1 {
		t.Fatalf("no filters: %s %v %v", q, args, err)
	}
}

func TestListFilterErrors(t *testing.T) {
	now := time.Now()
	for name, f := range map[string]ListFilter{
		"unknown status":  {Status: "sent"},
		"limit too large": {Limit: MaxListLimit + 1},
		"negative limit":  {Limit: -1},
		"from after to":   {From: now, To: now.Add(-time.Hour)},
		"bad cursor":      {Cursor: "%%%"},
		"cursor no row":   {Cursor: encodeCursor(now, "")},
	} {
		if _, _, err := listQuery("ws", f); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	at, id, err := decodeCursor(encodeCursor(time.Unix(1700000000, 0), "uq_abc"))
	if err != nil || at.Unix() != 1700000000 || id != "uq_abc" {
		t.Fatalf("cursor round trip: %v %s %v", at, id, err)
	}
}
