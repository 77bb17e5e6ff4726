package uploader_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
	"github.com/revtrack/revtrack/uploader/googlefake"
)

func (e *uploadEnv) goLive() {
	e.t.Helper()
	m, err := e.setup.SetValidationOnly(e.ctx, setupActor, e.ws, e.m.MappingID, false)
	if err != nil || m.ValidationOnly {
		e.t.Fatalf("validation only off: %+v %v", m, err)
	}
	e.m = m
}

// TestLiveAcceptedThenDiagnosticsSuccess: a live row is accepted with its request ID, its
// diagnostics are due DiagnosticsDelay later (not before), and SUCCESS keeps it accepted.
func TestLiveAcceptedThenDiagnosticsSuccess(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.goLive()
	e.start()
	j := e.job(e.m, "evt-live", "gclid", "Cj0-live", e.eventTime())
	e.produce(j)
	r := e.waitStatus(j.RowID, uploader.StatusAccepted)
	if r.RequestID == "" || r.ValidationOnly || r.NextAttemptAt == nil || r.NextAttemptAt.Sub(r.UpdatedAt) != time.Minute {
		t.Fatalf("accepted row %+v", r)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(e.calls(retrievePath)); n != 0 {
		t.Fatalf("polled %d times before the diagnostics delay", n)
	}
	e.advance(time.Minute + time.Second)
	r = e.waitRow(j.RowID, "processed", func(r uploader.Row) bool { return r.DiagnosticsStatus == "SUCCESS" })
	if r.Status != uploader.StatusAccepted || r.Message != "processed" || r.NextAttemptAt != nil || r.PollAttempts != 1 {
		t.Fatalf("after diagnostics %+v", r)
	}
	polls := e.calls(retrievePath)
	if len(polls) != 1 || !strings.Contains(polls[0].RawQuery, r.RequestID) {
		t.Fatalf("polls %+v", polls)
	}
}

// TestTransientFailureThenSuccess: a 503 moves the row to retrying with backoff; the retry succeeds.
func TestTransientFailureThenSuccess(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.fake.FailIngest(http.StatusServiceUnavailable, 1)
	e.start()
	j := e.job(e.m, "evt-503", "gclid", "Cj0-503", e.eventTime())
	e.produce(j)
	r := e.waitStatus(j.RowID, uploader.StatusValidated)
	if r.Attempts != 2 {
		t.Fatalf("attempts %d", r.Attempts)
	}
	if vs := strings.Join(e.versions(j.RowID), ","); vs != "queued,retrying,validated" {
		t.Fatalf("versions %s", vs)
	}
	if n := len(e.calls(ingestPath)); n != 2 {
		t.Fatalf("%d ingest requests", n)
	}
	if e.metric("revtrack_upload_ingest_requests_total", map[string]string{"outcome": "transient"}) != 1 {
		t.Fatal("transient outcome not counted")
	}
}

// TestQuotaHonoursRetryAfter: a 429 with RetryInfo (30 s in the fake) holds the row and every
// further request until then.
func TestQuotaHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.fake.FailIngest(http.StatusTooManyRequests, 1)
	e.start()
	j := e.job(e.m, "evt-429", "gclid", "Cj0-429", e.eventTime())
	e.produce(j)
	r := e.waitStatus(j.RowID, uploader.StatusRetrying)
	if r.NextAttemptAt == nil || r.NextAttemptAt.Sub(r.UpdatedAt) < 29*time.Second || !strings.Contains(r.Message, "quota") {
		t.Fatalf("retrying row %+v", r)
	}
	other := e.job(e.m, "evt-429-b", "gclid", "Cj0-429-b", e.eventTime())
	e.produce(other)
	e.firstStatus(other.RowID)
	time.Sleep(time.Second)
	if n := len(e.calls(ingestPath)); n != 1 {
		t.Fatalf("%d ingest requests during the quota wait", n)
	}
	e.advance(31 * time.Second)
	e.waitStatus(j.RowID, uploader.StatusValidated)
	e.waitStatus(other.RowID, uploader.StatusValidated)
}

// TestPermanentErrorRejectsOnlyNamedRows: the fast-fail 400 names events[1]; that row is rejected
// with the violation's reason, the others stay queued and go in the next request without it.
func TestPermanentErrorRejectsOnlyNamedRows(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	at := e.eventTime()
	jobs := []schemas.UploadJob{
		e.job(e.m, "evt-a", "gclid", "Cj0-good-a", at),
		e.job(e.m, "evt-b", "gclid", "invalid-b", at),
		e.job(e.m, "evt-c", "gclid", "Cj0-good-c", at.Add(time.Second)),
	}
	e.produce(jobs...)
	e.start() // the three rows are inserted by one batch, hence due in one round
	bad := e.waitStatus(jobs[1].RowID, uploader.StatusRejected)
	if !strings.Contains(strings.Join(bad.ReasonCodes, ","), "INVALID_FORMAT") || !strings.Contains(bad.Message, "rejected by the platform") {
		t.Fatalf("rejected row %+v", bad)
	}
	for _, j := range []schemas.UploadJob{jobs[0], jobs[2]} {
		if r := e.waitStatus(j.RowID, uploader.StatusValidated); r.Attempts != 1 {
			t.Fatalf("resent row %+v", r)
		}
		if vs := strings.Join(e.versions(j.RowID), ","); vs != "queued,validated" {
			t.Fatalf("a row the error did not name changed: %s", vs)
		}
	}
	sent := e.calls(ingestPath)
	if len(sent) != 2 || len(decodeSent(t, sent[0]).Events) != 3 || len(decodeSent(t, sent[1]).Events) != 2 {
		t.Fatalf("requests: %d", len(sent))
	}
	for _, ev := range decodeSent(t, sent[1]).Events {
		if ev.TransactionID == jobs[1].TransactionID {
			t.Fatal("the rejected row was resent")
		}
	}
}

// TestDisconnectStopsUploads: after a confirmed disconnect nothing is sent; rows wait and say why.
func TestDisconnectStopsUploads(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); err != nil {
		t.Fatal(err)
	}
	e.start()
	j := e.job(e.m, "evt-after-disconnect", "gclid", "Cj0-disc", e.eventTime())
	e.produce(j)
	r := e.waitRow(j.RowID, "waiting", func(r uploader.Row) bool { return strings.HasPrefix(r.Message, "waiting:") })
	if r.Status != uploader.StatusQueued || !strings.Contains(r.Message, "disconnected") || r.Attempts != 0 {
		t.Fatalf("row %+v", r)
	}
	time.Sleep(time.Second) // several rounds
	if n := len(e.calls(ingestPath)); n != 0 {
		t.Fatalf("%d ingest requests after disconnect", n)
	}
	if vs := e.versions(j.RowID); len(vs) != 2 {
		t.Fatalf("a waiting row is written once per reason, not per round: %v", vs)
	}
}

// TestRevokedCredentialWaitsForReconnect: the platform refuses the credential (the user removed the
// app's access); after one refresh the row keeps its state and says the connection needs a reconnect.
func TestRevokedCredentialWaitsForReconnect(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.fake.RevokeGrant(e.token())
	e.start()
	j := e.job(e.m, "evt-revoked", "gclid", "Cj0-revoked", e.eventTime())
	e.produce(j)
	r := e.waitRow(j.RowID, "reconnect message", func(r uploader.Row) bool { return strings.Contains(r.Message, "reconnected") })
	// Attempts may already be 2: the first backoff is jittered over [0, 1 s), so a second round can
	// come before the row is read.
	if r.Status != uploader.StatusQueued || r.Attempts < 1 || r.NextAttemptAt == nil {
		t.Fatalf("row %+v", r)
	}
	if e.metric("revtrack_upload_ingest_requests_total", map[string]string{"outcome": "unauthenticated"}) < 1 {
		t.Fatal("unauthenticated outcome not counted")
	}
}

// TestValidationOnlyOffDoesNotReplay: turning Validation only off uploads new events only.
func TestValidationOnlyOffDoesNotReplay(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	first := e.job(e.m, "evt-validated", "gclid", "Cj0-first", e.eventTime())
	e.produce(first)
	e.waitStatus(first.RowID, uploader.StatusValidated)
	e.goLive()
	second := e.job(e.m, "evt-live", "gclid", "Cj0-second", e.eventTime())
	e.produce(second)
	e.waitStatus(second.RowID, uploader.StatusAccepted)
	time.Sleep(500 * time.Millisecond)
	var live, validateOnly int
	for _, req := range e.calls(ingestPath) {
		s := decodeSent(t, req)
		for _, ev := range s.Events {
			switch {
			case ev.TransactionID == first.TransactionID && !s.ValidateOnly:
				t.Fatal("the validated row was replayed live")
			case s.ValidateOnly:
				validateOnly++
			default:
				live++
			}
		}
	}
	if live != 1 || validateOnly != 1 {
		t.Fatalf("live %d, validate-only %d", live, validateOnly)
	}
	if r := e.row(first.RowID); r.Status != uploader.StatusValidated {
		t.Fatalf("validated row moved: %+v", r)
	}
}
