package uploader_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
)

// sessionFlow starts a connection as the console does for a signed-in person (no key), opens the
// begin link and follows Google's consent to the callback's state and code.
func (e *setupEnv) sessionFlow(userID string) (state, code, binding string) {
	e.t.Helper()
	start, err := e.setup.ConnectWithSession(e.ctx, "user:"+userID, userID, e.ws)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := url.Parse(start.BeginURL)
	b, err := e.setup.Begin(e.ctx, u.Query().Get("flow"))
	if err != nil {
		e.t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(b.AuthURL)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	return loc.Query().Get("state"), loc.Query().Get("code"), b.Binding
}

// A person signed in to the console connects with their session: the flow is the key's, and the
// callback checks their role in the workspace instead of a key's scope, so someone demoted to
// member (or removed) meanwhile stores nothing.
func TestSessionFlowChecksTheStartersRole(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	s := e.tenant.Store
	admin, err := s.CreateUser(e.ctx, "test", "acme", "ads-admin@acme.test", "Ads Admin", controlplane.RoleAdmin, "a password of twelve")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(e.ctx, "test", "acme", "ads-owner@acme.test", "Owner", controlplane.RoleOwner, "a password of twelve"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.ConnectWithSession(e.ctx, "user:", "", e.ws); err == nil {
		t.Fatal("a flow without its starter was started")
	}

	state, code, binding := e.sessionFlow(admin.ID)
	if _, err := s.SetMemberRole(e.ctx, "test", e.ws, admin.ID, controlplane.RoleMember); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !forbidden(err) {
		t.Fatalf("callback of a starter demoted to member: %v", err)
	}
	if c, ok, err := e.setup.Connection(e.ctx, e.ws); err != nil || (ok && c.Connected()) {
		t.Fatalf("a demoted starter connected: %+v %v", c, err)
	}

	if _, err := s.SetMemberRole(e.ctx, "test", e.ws, admin.ID, controlplane.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	state, code, binding = e.sessionFlow(admin.ID)
	res, err := e.setup.BrowserCallback(e.ctx, state, code, binding)
	if err != nil || !res.Connection.Connected() {
		t.Fatalf("callback of an admin's flow: %+v %v", res, err)
	}

	state, code, binding = e.sessionFlow(admin.ID)
	if _, err := s.RemoveMember(e.ctx, "test", e.ws, admin.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !forbidden(err) {
		t.Fatalf("callback of a starter removed from the workspace: %v", err)
	}
}
