package uploader_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
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
// further request until then: the delay as given, not raised to the 60 s used without RetryInfo.
func TestQuotaHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), func(c *uploader.Config) { c.QuotaWait = time.Minute })
	e.fake.FailIngest(http.StatusTooManyRequests, 1)
	e.start()
	j := e.job(e.m, "evt-429", "gclid", "Cj0-429", e.eventTime())
	e.produce(j)
	r := e.waitStatus(j.RowID, uploader.StatusRetrying)
	// Stored times are whole seconds.
	if wait := r.NextAttemptAt.Sub(r.UpdatedAt); r.NextAttemptAt == nil || wait < 29*time.Second || wait > 31*time.Second ||
		!strings.Contains(r.Message, "quota") {
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
	// The violation names events[1].ad_identifiers.gclid: the diagnosis is the invalid click ID,
	// whatever the platform's reason word.
	if strings.Join(bad.ReasonCodes, ",") != uploader.ReasonInvalidClickIDField+",INVALID_FORMAT" ||
		!strings.Contains(bad.Message, "rejected by the platform") || bad.Diagnosis == nil || bad.Diagnosis.Code != uploader.DiagnosisInvalidClickID {
		t.Fatalf("rejected row %+v (diagnosis %+v)", bad, bad.Diagnosis)
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
// app's access); after one refresh the row keeps its state and says the connection needs a
// reconnect, and the connection (still connected) shows why until a new connection is made, after
// which the row goes out.
func TestRevokedCredentialWaitsForReconnect(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	tok := e.token()
	e.fake.RevokeGrant(tok)
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
	var c controlplane.AdConnection
	testenv.Eventually(t, "the connection shows the refused credential", func() bool {
		c = e.connection()
		return c.LastError != ""
	})
	if !c.Connected() || !strings.Contains(c.LastError, "refused the stored credential") || !strings.Contains(c.LastError, "connect again") ||
		strings.Contains(c.LastError, tok) || len(c.GrantedScopes) != 0 {
		t.Fatalf("connection %+v (a refused grant lists no scopes)", c)
	}
	time.Sleep(500 * time.Millisecond) // more refused rounds: one audited error, not one per round
	if n := countActions(e.auditActions(), "ads_connection.credential_refused"); n != 1 {
		t.Fatalf("%d credential_refused audit entries", n)
	}
	e.assertSecretNowhere(tok)

	if c = e.connect(); c.LastError != "" || !c.Connected() || len(c.GrantedScopes) == 0 {
		t.Fatalf("after reconnecting %+v", c)
	}
	e.waitStatus(j.RowID, uploader.StatusValidated)
	if c = e.connection(); c.LastError != "" {
		t.Fatalf("the error came back after the reconnect: %q", c.LastError)
	}
}

func countActions(actions []string, action string) int {
	n := 0
	for _, a := range actions {
		if a == action {
			n++
		}
	}
	return n
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

// TestValidationOnlyOffAppliesToNewEventsOnly: a row filed while Validation only was on stays
// validate-only although it is sent after the switch (queued behind a quota hold, or retrying);
// an event filed after the switch goes live.
func TestValidationOnlyOffAppliesToNewEventsOnly(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.fake.FailIngest(http.StatusTooManyRequests, 1)
	e.start()
	retrying := e.job(e.m, "evt-vo-retrying", "gclid", "Cj0-vo-retrying", e.eventTime())
	e.produce(retrying)
	e.waitStatus(retrying.RowID, uploader.StatusRetrying)
	// The quota holds the workspace's requests (30 s of the uploader's clock): this row is filed
	// and waits queued.
	queued := e.job(e.m, "evt-vo-queued", "gclid", "Cj0-vo-queued", e.eventTime())
	e.produce(queued)
	if st := e.firstStatus(queued.RowID); st != "queued" {
		t.Fatalf("filed %s", st)
	}
	if r := e.row(queued.RowID); !r.ValidationOnly {
		t.Fatalf("a row filed under Validation only does not record it: %+v", r)
	}
	e.goLive()
	live := e.job(e.m, "evt-vo-live", "gclid", "Cj0-vo-live", e.eventTime())
	e.produce(live)
	e.firstStatus(live.RowID)
	if n := len(e.calls(ingestPath)); n != 1 {
		t.Fatalf("%d ingest requests during the quota hold", n)
	}
	e.advance(31 * time.Second)
	for _, j := range []schemas.UploadJob{retrying, queued} {
		if r := e.waitStatus(j.RowID, uploader.StatusValidated); !r.ValidationOnly {
			t.Fatalf("row %+v", r)
		}
	}
	if r := e.waitStatus(live.RowID, uploader.StatusAccepted); r.ValidationOnly || r.RequestID == "" {
		t.Fatalf("live row %+v", r)
	}
	mode := map[string]bool{}
	for _, req := range e.calls(ingestPath)[1:] { // the first one got the 429
		s := decodeSent(t, req)
		for _, ev := range s.Events {
			if _, dup := mode[ev.TransactionID]; dup {
				t.Fatalf("%s sent twice", ev.TransactionID)
			}
			mode[ev.TransactionID] = s.ValidateOnly
			if len(s.Events) > 1 && !s.ValidateOnly {
				t.Fatalf("a live request of %d events", len(s.Events))
			}
		}
	}
	if len(mode) != 3 || !mode[retrying.TransactionID] || !mode[queued.TransactionID] || mode[live.TransactionID] {
		t.Fatalf("validateOnly per transaction %v", mode)
	}
}

// TestNoUploadThroughAMappingOfAnEndedConnection: after a confirmed disconnect the old mapping
// cannot be re-enabled, not even once a new connection with the same account exists, and its rows
// never go out; a mapping made for the new connection uploads.
func TestNoUploadThroughAMappingOfAnEndedConnection(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); err != nil {
		t.Fatal(err)
	}
	e.start()
	old := e.job(e.m, "evt-old-mapping", "gclid", "Cj0-old-mapping", e.eventTime())
	e.produce(old)
	e.waitRow(old.RowID, "waiting", func(r uploader.Row) bool { return strings.HasPrefix(r.Message, "waiting:") })

	e.ready() // a new connection, the same account
	on := true
	_, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, e.m.MappingID, uploader.MappingUpdate{Enabled: &on})
	if !errors.Is(err, uploader.ErrConflict) || !strings.Contains(err.Error(), "create a new mapping") {
		t.Fatalf("re-enable after a disconnect: %v", err)
	}
	r := e.waitRow(old.RowID, "waiting for a new mapping", func(r uploader.Row) bool { return strings.Contains(r.Message, "create a new mapping") })
	if r.Status != uploader.StatusQueued || r.Attempts != 0 {
		t.Fatalf("old row %+v", r)
	}

	m := e.mapping("paid", googlefake.DefaultActionID)
	j := e.job(m, "evt-new-mapping", "gclid", "Cj0-new-mapping", m.CreatedAt.Add(time.Second))
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusValidated)
	time.Sleep(300 * time.Millisecond)
	for _, req := range e.calls(ingestPath) {
		for _, ev := range decodeSent(t, req).Events {
			if ev.TransactionID == old.TransactionID {
				t.Fatal("a row of the old mapping was sent")
			}
		}
	}
	if r := e.row(old.RowID); r.Status != uploader.StatusQueued {
		t.Fatalf("old row %+v", r)
	}
}
