package platformsync_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/egress"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/syncruns"
)

// secret stands for whatever an internal service would answer (another tenant's sealed token, in
// the attack this guards against): it must never reach a run's stored or returned error.
const secret = "SECRET-internal-answer-7f3a"

// The partner API client never follows a redirect: a 302 to an internal address (ClickHouse's HTTP
// port, in the attack) is not fetched, and the run fails with our own words.
func TestSyncNeverFollowsRedirects(t *testing.T) {
	e := newEnv(t, noLimit())
	var internal atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internal.Add(1)
		_, _ = w.Write([]byte(secret))
	}))
	defer target.Close()
	wrap := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/?query=SELECT+token_enc+FROM+partner_connections", http.StatusFound)
	}
	e.wrap.Store(&wrap)
	run, err := e.service(t, config()).RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
	if err == nil || run.Status != platformsync.StatusFailed {
		t.Fatalf("run %+v, err %v: want failed", run, err)
	}
	if !errors.Is(err, egress.ErrRedirect) && !strings.Contains(run.Error, "redirect") {
		t.Fatalf("run error %q (%v): want the redirect named", run.Error, err)
	}
	if n := internal.Load(); n != 0 {
		t.Fatalf("the redirect target was fetched %d times", n)
	}
	assertNoSecret(t, e, run.Error)
}

// Upstream bodies and GraphQL messages never reach the stored or returned error.
func TestSyncErrorsCarryNoUpstreamText(t *testing.T) {
	for name, answer := range map[string]func(w http.ResponseWriter){
		"non-200 body": func(w http.ResponseWriter) { http.Error(w, secret, http.StatusBadRequest) },
		"401 body":     func(w http.ResponseWriter) { http.Error(w, secret, http.StatusUnauthorized) },
		"graphql messages": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"errors":[{"message":"` + secret + `","extensions":{"code":"` + secret + `"}},{"message":"x","extensions":{"code":"ACCESS_DENIED"}}]}`))
		},
		"not json": func(w http.ResponseWriter) { _, _ = w.Write([]byte(secret)) },
		"bad data": func(w http.ResponseWriter) {
			_, _ = w.Write([]byte(`{"data":{"transactions":{"edges":"` + secret + `"}}}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, noLimit())
			wrap := func(w http.ResponseWriter, r *http.Request) { answer(w) }
			e.wrap.Store(&wrap)
			run, err := e.service(t, config()).RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
			if err == nil || run.Status != platformsync.StatusFailed || run.Error == "" {
				t.Fatalf("run %+v, err %v: want failed with an error", run, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("returned error carries the upstream text: %v", err)
			}
			assertNoSecret(t, e, run.Error)
			if name == "graphql messages" && !strings.Contains(run.Error, "ACCESS_DENIED") {
				t.Errorf("run error %q: want the known error code kept", run.Error)
			}
		})
	}
}

// With the operator's default policy, a partner API address on loopback is refused twice: by the
// configuration check and, should a name resolve there, by the dialer, before any byte is sent.
func TestSyncRefusesInternalAddresses(t *testing.T) {
	e := newEnv(t, noLimit())
	var hits atomic.Int32
	wrap := func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }
	e.wrap.Store(&wrap)

	cfg := config()
	cfg.BaseURL = e.srv.URL
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "partner-api-base-url") {
		t.Fatalf("Validate with a loopback partner API: %v, want refused", err)
	}
	cfg.BaseURL = strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1)
	if err := cfg.Validate(); err == nil {
		t.Fatal("Validate with a localhost partner API: want refused")
	}
	// Past the configuration check (a name can re-resolve), the dialer refuses the address itself
	// (internal/egress tests a name that resolves to loopback).
	cfg.BaseURL = e.srv.URL
	run, err := e.service(t, cfg).RunApp(testenv.Ctx(t), e.ws.ID, e.app, platformsync.TriggerManual)
	if !errors.Is(err, egress.ErrForbiddenAddress) && !strings.Contains(run.Error, "not allowed") {
		t.Fatalf("run %+v, err %v: want the address refused", run, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback listener was reached %d times", n)
	}
}

func assertNoSecret(t *testing.T, e *env, runErr string) {
	t.Helper()
	if strings.Contains(runErr, secret) {
		t.Fatalf("run error carries the upstream text: %q", runErr)
	}
	recs, err := syncruns.Store{CH: e.db.Conn}.List(testenv.Ctx(t), e.ws.ID, "", 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if strings.Contains(r.Error, secret) {
			t.Fatalf("stored run error carries the upstream text: %q", r.Error)
		}
	}
}
