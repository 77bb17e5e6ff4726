package uploader_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader"
)

// TestDiagnosticsPartialSuccessOfSeveralEvents: with three events per live request, one of which
// the platform fails asynchronously, the request is PARTIAL_SUCCESS; the reason and counts show on
// every row of the request (the platform does not say which), and the rows stay accepted. One
// poll per request ID, not per row.
func TestDiagnosticsPartialSuccessOfSeveralEvents(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), func(c *uploader.Config) { c.LiveBatchSize = 3 })
	e.goLive()
	at := e.eventTime()
	jobs := []string{"Cj0-ok-1", "fake-CLICK_NOT_FOUND-1", "Cj0-ok-2"}
	var ids []string
	for i, click := range jobs {
		j := e.job(e.m, "evt-partial-"+click, "gclid", click, at.Add(time.Duration(i)*time.Second))
		ids = append(ids, j.RowID)
		e.produce(j)
	}
	e.start()
	var reqID string
	for _, id := range ids {
		r := e.waitStatus(id, uploader.StatusAccepted)
		if reqID != "" && r.RequestID != reqID || r.RequestEvents != 3 {
			t.Fatalf("rows of one request: %+v", r)
		}
		reqID = r.RequestID
	}
	e.advance(time.Minute + time.Second)
	for _, id := range ids {
		r := e.waitRow(id, "diagnostics", func(r uploader.Row) bool { return r.DiagnosticsStatus != "" })
		if r.Status != uploader.StatusAccepted || r.DiagnosticsStatus != "PARTIAL_SUCCESS" ||
			strings.Join(r.ReasonCodes, ",") != "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND" ||
			!strings.Contains(r.Message, "1 of 3 events") || !strings.Contains(r.Message, "CLICK_NOT_FOUND ×1") {
			t.Fatalf("row %+v", r)
		}
	}
	if n := len(e.calls(retrievePath)); n != 1 {
		t.Fatalf("%d polls for one request", n)
	}
}

// TestDiagnosticsFailedRejectsTheRow: a one-event request that fails asynchronously rejects its
// row with the platform's reason code; a user Retry queues it again and it is resent.
func TestDiagnosticsFailedRejectsTheRow(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.goLive()
	e.start()
	j := e.job(e.m, "evt-notfound", "gclid", "fake-CLICK_NOT_FOUND-7", e.eventTime())
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusAccepted)
	e.advance(time.Minute + time.Second)
	r := e.waitStatus(j.RowID, uploader.StatusRejected)
	if r.DiagnosticsStatus != "FAILED" || strings.Join(r.ReasonCodes, ",") != "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND" ||
		r.RequestID == "" || r.ClickID != "fake-CLICK_NOT_FOUND-7" {
		t.Fatalf("rejected row %+v", r)
	}

	q, err := e.rows.Retry(e.ctx, e.ws, j.RowID)
	if err != nil || q.Status != uploader.StatusQueued || q.Attempts != 0 || q.RequestID != "" || len(q.ReasonCodes) != 0 {
		t.Fatalf("retry: %+v %v", q, err)
	}
	e.waitRow(j.RowID, "resent", func(r uploader.Row) bool { return r.Status == uploader.StatusAccepted && r.Attempts == 1 })
	if n := len(e.calls(ingestPath)); n != 2 {
		t.Fatalf("%d ingest requests", n)
	}
}

// TestDiagnosticsProcessingBacksOff: PROCESSING schedules the next poll twice as far; a failed poll
// makes the row retrying (request ID kept, never resent) until a poll answers.
func TestDiagnosticsProcessingBacksOff(t *testing.T) {
	t.Parallel()
	cfg := googlefake.DefaultConfig()
	cfg.ProcessingDelay = 24 * time.Hour
	e := newUploadEnv(t, cfg, nil)
	e.goLive()
	e.start()
	j := e.job(e.m, "evt-processing", "gclid", "Cj0-processing", e.eventTime())
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusAccepted)
	e.advance(time.Minute + time.Second)
	r := e.waitRow(j.RowID, "first poll", func(r uploader.Row) bool { return r.PollAttempts == 1 })
	if r.Status != uploader.StatusAccepted || r.DiagnosticsStatus != "PROCESSING" || r.NextAttemptAt == nil ||
		r.NextAttemptAt.Sub(r.UpdatedAt) != 2*time.Minute {
		t.Fatalf("after PROCESSING %+v", r)
	}

	e.fake.FailRetrieve(http.StatusServiceUnavailable, 1)
	e.advance(2*time.Minute + time.Second)
	r = e.waitRow(j.RowID, "failed poll", func(r uploader.Row) bool { return r.PollAttempts == 2 })
	if r.Status != uploader.StatusRetrying || r.RequestID == "" || r.NextAttemptAt.Sub(r.UpdatedAt) != 4*time.Minute {
		t.Fatalf("after a failed poll %+v", r)
	}
	e.advance(4*time.Minute + time.Second)
	r = e.waitRow(j.RowID, "third poll", func(r uploader.Row) bool { return r.PollAttempts == 3 })
	if r.Status != uploader.StatusAccepted || r.DiagnosticsStatus != "PROCESSING" {
		t.Fatalf("after the third poll %+v", r)
	}
	if n := len(e.calls(ingestPath)); n != 1 {
		t.Fatalf("a row waiting for diagnostics was resent: %d ingest requests", n)
	}
}

// TestDiagnosticsFailedWithoutDetails: FAILED without any error count still leaves a reason on the
// rejected row and a hint in its diagnosis.
func TestDiagnosticsFailedWithoutDetails(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.goLive()
	e.start()
	j := e.job(e.m, "evt-failed-silently", "gclid", "failed-1", e.eventTime())
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusAccepted)
	e.advance(time.Minute + time.Second)
	r := e.waitStatus(j.RowID, uploader.StatusRejected)
	if r.DiagnosticsStatus != "FAILED" || strings.Join(r.ReasonCodes, ",") != uploader.ReasonProcessingFailedWithoutDetails ||
		!strings.Contains(r.Message, "no reason given") || r.Diagnosis == nil || r.Diagnosis.Code != uploader.DiagnosisOther ||
		!strings.Contains(r.Diagnosis.Hint, "without saying why") {
		t.Fatalf("row %+v (diagnosis %+v)", r, r.Diagnosis)
	}
}
