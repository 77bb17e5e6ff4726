package uploader

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/uploader/google"
)

// TestLandedStatuses maps each request status onto rows (docs/ADS_UPLOAD.md, poller comment).
func TestLandedStatuses(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	p := &poller{cfg: Config{DiagnosticsDelay: 30 * time.Minute, DiagnosticsMaxAttempts: 3}, now: func() time.Time { return now }}
	accepted := func(events uint32, n int) []Row {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{RowID: "uq_" + string(rune('a'+i)), Status: StatusAccepted, RequestID: "t-1", RequestEvents: events, Version: 1}
		}
		return rows
	}
	notFound := []google.ReasonCount{{Reason: "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND", Count: 2}}
	warn := []google.ReasonCount{{Reason: "PROCESSING_WARNING_REASON_INTERNAL_ERROR", Count: 1}}
	for _, c := range []struct {
		name    string
		rows    []Row
		dest    google.DestinationStatus
		status  Status
		diag    string
		codes   string
		message string
		next    bool
	}{
		{"success", accepted(1, 1), google.DestinationStatus{RequestStatus: "SUCCESS", RecordCount: 1, Warnings: warn},
			StatusAccepted, "SUCCESS", "", "processed; warnings: PROCESSING_WARNING_REASON_INTERNAL_ERROR ×1", false},
		{"failed", accepted(1, 1), google.DestinationStatus{RequestStatus: "FAILED", RecordCount: 1,
			Errors: []google.ReasonCount{{Reason: "PROCESSING_ERROR_REASON_SOMETHING_NEW", Count: 1}}},
			StatusRejected, "FAILED", "PROCESSING_ERROR_REASON_SOMETHING_NEW", "SOMETHING_NEW ×1", false},
		{"partial success of a one-event request", accepted(1, 1), google.DestinationStatus{RequestStatus: "PARTIAL_SUCCESS", RecordCount: 1, Errors: notFound},
			StatusRejected, "PARTIAL_SUCCESS", "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND", "CLICK_NOT_FOUND ×2", false},
		{"partial success of several events", accepted(5, 5), google.DestinationStatus{RequestStatus: "PARTIAL_SUCCESS", RecordCount: 5, Errors: notFound},
			StatusAccepted, "PARTIAL_SUCCESS", "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND", "2 of 5 events", false},
		{"every event of several failed", accepted(2, 2), google.DestinationStatus{RequestStatus: "PARTIAL_SUCCESS", RecordCount: 2, Errors: notFound},
			StatusRejected, "PARTIAL_SUCCESS", "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND", "CLICK_NOT_FOUND ×2", false},
		{"processing", accepted(1, 1), google.DestinationStatus{RequestStatus: "PROCESSING"},
			StatusAccepted, "PROCESSING", "", "diagnostics processing", true},
		{"unknown status", accepted(1, 1), google.DestinationStatus{RequestStatus: "REQUEST_STATUS_UNKNOWN"},
			StatusAccepted, "PROCESSING", "", "diagnostics processing", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := p.landed(c.rows, c.dest)
			if len(out) != len(c.rows) {
				t.Fatalf("%d changes", len(out))
			}
			for _, ch := range out {
				r := ch.row
				if r.Status != c.status || r.DiagnosticsStatus != c.diag || strings.Join(r.ReasonCodes, ",") != c.codes ||
					!strings.Contains(r.Message, c.message) || (r.NextAttemptAt != nil) != c.next || r.PollAttempts != 1 ||
					r.RequestID != "t-1" || r.Version <= 1 {
					t.Fatalf("row %+v (message %q)", r, r.Message)
				}
			}
		})
	}
}

// TestPollSchedule: exponential from DiagnosticsDelay, then polling stops at the attempt cap with
// the row still accepted.
func TestPollSchedule(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	p := &poller{cfg: Config{DiagnosticsDelay: 30 * time.Minute, DiagnosticsMaxAttempts: 4}, now: func() time.Time { return now }}
	rows := []Row{{RowID: "uq_a", Status: StatusAccepted, RequestID: "t-1"}}
	for polls, wait := range []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour} {
		out := p.later(rows, "diagnostics processing", false)
		r := out[0].row
		if r.NextAttemptAt == nil || r.NextAttemptAt.Sub(now) != wait || int(r.PollAttempts) != polls+1 {
			t.Fatalf("poll %d: next %v attempts %d", polls+1, r.NextAttemptAt, r.PollAttempts)
		}
		rows = []Row{r}
	}
	r := p.later(rows, "diagnostics processing", true)[0].row
	if r.NextAttemptAt != nil || r.Status != StatusAccepted || r.DiagnosticsStatus != DiagnosticsUnavailable ||
		!strings.Contains(r.Message, "polling stopped") {
		t.Fatalf("after the cap: %+v", r)
	}
	// A transient poll failure before the cap: retrying, request ID kept.
	r = p.later([]Row{{RowID: "uq_b", Status: StatusAccepted, RequestID: "t-2"}}, "poll failed", true)[0].row
	if r.Status != StatusRetrying || r.RequestID != "t-2" || r.NextAttemptAt == nil {
		t.Fatalf("transient: %+v", r)
	}
}
