package uploader_test

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader"
)

// TestDiagnosticsOutcomeUnknownAfterDisconnect: rows accepted live shortly before the connection is
// disconnected can never have their diagnostics read (the credential is revoked and erased). Once a
// poll comes due they say so, the one not yet due included: accepted with diagnostics
// OUTCOME_UNKNOWN, the reason code CONNECTION_DISCONNECTED and its diagnosis, no poll counted and
// none scheduled, and none made. (Before, they waited "disconnected" while their attempts ran out
// and then stayed accepted as if nothing were wrong.)
func TestDiagnosticsOutcomeUnknownAfterDisconnect(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.goLive()
	e.start()
	first := e.job(e.m, "evt-before-disconnect-1", "gclid", "Cj0-before-1", e.eventTime())
	e.produce(first)
	e.waitStatus(first.RowID, uploader.StatusAccepted)
	e.advance(30 * time.Second)
	second := e.job(e.m, "evt-before-disconnect-2", "gclid", "Cj0-before-2", e.eventTime().Add(time.Second))
	e.produce(second)
	e.waitStatus(second.RowID, uploader.StatusAccepted)

	c, err := e.setup.Disconnect(e.ctx, setupActor, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GrantedScopes) != 0 || len(e.connection().GrantedScopes) != 0 {
		t.Fatalf("a revoked connection still lists scopes: %v / %v", c.GrantedScopes, e.connection().GrantedScopes)
	}
	e.advance(31 * time.Second) // the first row's poll is due, the second's is 30 s away
	for _, id := range []string{first.RowID, second.RowID} {
		r := e.waitRow(id, "outcome unknown", func(r uploader.Row) bool { return r.DiagnosticsStatus != "" })
		if r.Status != uploader.StatusAccepted || r.DiagnosticsStatus != uploader.DiagnosticsOutcomeUnknown || r.PollAttempts != 0 ||
			r.NextAttemptAt != nil || strings.Join(r.ReasonCodes, ",") != uploader.ReasonConnectionDisconnected ||
			!strings.Contains(r.Message, "outcome unknown: the advertising connection was disconnected on ") ||
			!strings.Contains(r.Message, r.RequestID) {
			t.Fatalf("row %+v", r)
		}
		if r.Diagnosis == nil || r.Diagnosis.Code != uploader.DiagnosisOutcomeUnknown || !strings.Contains(r.Diagnosis.Hint, "Google Ads") {
			t.Fatalf("diagnosis %+v", r.Diagnosis)
		}
	}
	if n := len(e.calls(retrievePath)); n != 0 {
		t.Fatalf("%d diagnostics polls without a connection", n)
	}
	settled := e.row(first.RowID).Version
	e.advance(48 * time.Hour)
	time.Sleep(500 * time.Millisecond) // several rounds: nothing is due any more
	if v := e.row(first.RowID).Version; v != settled {
		t.Fatal("a row whose outcome is unknown was written again")
	}
	if _, err := e.rows.Retry(e.ctx, e.ws, first.RowID); err == nil {
		t.Fatal("a row the platform accepted was queued again (a resend could count the conversion twice)")
	}
}

// TestDiagnosticsWaitForReconnectSpendNoAttempts: while the platform refuses the credential, no poll
// reaches it, so the rows wait for a reconnect without counting attempts, however long that takes
// (here far past the schedule of the 8 attempts); after the reconnect the first real poll reads the
// result and is the row's one attempt.
func TestDiagnosticsWaitForReconnectSpendNoAttempts(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.goLive()
	e.start()
	j := e.job(e.m, "evt-refused-before-poll", "gclid", "Cj0-refused", e.eventTime())
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusAccepted)
	e.fake.RevokeGrant(e.token())
	e.fake.ExpireAccessTokens()

	var r uploader.Row
	for range 12 {
		before := e.row(j.RowID).Version
		e.advance(25 * time.Hour) // past any scheduled poll (capped at a day)
		r = e.waitRow(j.RowID, "another wait", func(r uploader.Row) bool { return r.Version != before })
	}
	if r.Status != uploader.StatusAccepted || r.PollAttempts != 0 || r.DiagnosticsStatus != "" || r.NextAttemptAt == nil ||
		!strings.Contains(r.Message, "diagnostics wait") {
		t.Fatalf("row waiting for a reconnect %+v", r)
	}

	if c := e.connect(); !c.Connected() || len(c.GrantedScopes) == 0 {
		t.Fatalf("reconnected %+v", c)
	}
	e.advance(25 * time.Hour)
	r = e.waitRow(j.RowID, "diagnostics after the reconnect", func(r uploader.Row) bool { return r.DiagnosticsStatus != "" })
	if r.Status != uploader.StatusAccepted || r.DiagnosticsStatus != uploader.DiagnosticsSuccess || r.PollAttempts != 1 {
		t.Fatalf("row after the reconnect %+v", r)
	}
}
