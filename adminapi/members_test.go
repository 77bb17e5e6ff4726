package adminapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/testenv"
)

// tokenOf is the token in a one-time link's fragment.
func tokenOf(t *testing.T, link, route string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.RawQuery != "" || !strings.HasPrefix(u.Fragment, route+"?token=") {
		t.Fatalf("link %q: want the token in the fragment of %s", link, route)
	}
	return strings.TrimPrefix(u.Fragment, route+"?token=")
}

// TestInvitation: an owner invites (body golden, the token only in the link's fragment and stored
// only hashed); accepting signs the new person in with the invited role; the link then refuses; an
// expired link refuses; an invitation of someone with an account needs their password.
func TestInvitation(t *testing.T) {
	env := setupPeople(t, nil)
	ctx := testenv.Ctx(t)
	owner := env.signIn(t, ownerEmail)
	st, body, _ := owner.do(t, "POST", "/api/admin/invitations", map[string]string{"email": "New@Acme.test", "role": "admin"})
	if st != http.StatusCreated {
		t.Fatalf("invite: %d %v", st, body)
	}
	token := tokenOf(t, body["link"].(string), "/accept-invitation")
	if link := body["link"].(string); link != env.srv.URL+"/#/accept-invitation?token="+token {
		t.Errorf("link %q", link)
	}
	testenv.Golden(t, "testdata/invitation_created.golden.json", masked(t, body, upperCase("id", "expiresAt", "link")))
	var n uint64
	if err := env.store.Conn().QueryRow(ctx, "SELECT count() FROM user_tokens WHERE token_hash = ?", controlplane.HashKey(token)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored hash rows %d, %v", n, err)
	}
	if err := env.store.Conn().QueryRow(ctx, "SELECT count() FROM user_tokens WHERE token_hash = ? OR positionCaseInsensitive(token_hash, ?) > 0", token, token[:16]).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the token itself is stored: %d %v", n, err)
	}

	accept := map[string]string{"token": token, "name": "New Person", "password": "a long new password"}
	resp, raw := env.request(t, "POST", "/api/admin/invitations/accept", accept, "Origin", env.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("accept: %d %s", resp.StatusCode, raw)
	}
	newcomer := env.browserFrom(t, resp, raw)
	ws := newcomer.body["workspaces"].([]any)
	if len(ws) != 1 || ws[0].(map[string]any)["role"] != "admin" || ws[0].(map[string]any)["slug"] != "acme" {
		t.Errorf("workspaces after accepting: %v", ws)
	}
	if st, _, _ := newcomer.do(t, "POST", "/api/admin/keys", map[string]string{"name": "from the newcomer"}); st != http.StatusCreated {
		t.Errorf("the new admin creates a read key: %d", st)
	}
	// An admin-scoped key passes owner routes too: an admin may not make one.
	st, body, _ = newcomer.do(t, "POST", "/api/admin/keys", map[string]string{"name": "escalate", "scope": "admin"})
	if code, msg := refusal(body); st != http.StatusForbidden || code != "forbidden" || !strings.Contains(msg, "owner") {
		t.Errorf("an admin creates an admin-scoped key: %d %v", st, body)
	}
	if st, _, _ := owner.do(t, "POST", "/api/admin/keys", map[string]string{"name": "by the owner", "scope": "admin"}); st != http.StatusCreated {
		t.Errorf("the owner creates an admin-scoped key: %d", st)
	}
	resp, raw = env.request(t, "POST", "/api/admin/invitations/accept", accept)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "invalid, expired or already used") {
		t.Errorf("second accept: %d %s", resp.StatusCode, raw)
	}
	testenv.Golden(t, "testdata/invitation_used.golden.json", maskedJSON(t, raw, nil))

	// Expired: a link made to last a second.
	expired, _, err := env.store.CreateInvitation(ctx, "test", env.ws["acme"].ID, "late@acme.test", "member", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if resp, raw := env.request(t, "POST", "/api/admin/invitations/accept", map[string]string{"token": expired, "name": "Late", "password": "a long new password"}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("expired link: %d %s", resp.StatusCode, raw)
	}

	// Someone with an account: other's owner invites acme's member.
	multi := env.signIn(t, multiEmail)
	multi.workspace = "other"
	st, body, _ = multi.do(t, "POST", "/api/admin/invitations", map[string]string{"email": memberEmail, "role": "member"})
	if st != http.StatusCreated {
		t.Fatalf("invite an existing user: %d %v", st, body)
	}
	tok := tokenOf(t, body["link"].(string), "/accept-invitation")
	if resp, raw := env.request(t, "POST", "/api/admin/invitations/accept", map[string]string{"token": tok, "name": "Thief", "password": "a password of my own"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("accepting someone's invitation with another password: %d %s", resp.StatusCode, raw)
	}
	resp, raw = env.request(t, "POST", "/api/admin/invitations/accept", map[string]string{"token": tok, "password": password(memberEmail)})
	if resp.StatusCode != http.StatusOK || len(env.browserFrom(t, resp, raw).body["workspaces"].([]any)) != 2 {
		t.Errorf("accepting with the account's password: %d %s", resp.StatusCode, raw)
	}
	if _, err := env.store.AuthenticateUser(ctx, memberEmail, password(memberEmail)); err != nil {
		t.Errorf("the invitation changed an existing password: %v", err)
	}
}

// TestPasswordReset: an owner makes a reset link for a member (not for a stranger); using it sets
// the password and ends all the member's sessions at once; the link then refuses.
func TestPasswordReset(t *testing.T) {
	env := setupPeople(t, nil)
	owner := env.signIn(t, ownerEmail)
	member := env.signIn(t, memberEmail)
	if st, _, _ := owner.do(t, "POST", "/api/admin/password-resets", map[string]string{"email": "nobody@acme.test"}); st != http.StatusNotFound {
		t.Errorf("reset for a stranger: %d", st)
	}
	st, body, _ := owner.do(t, "POST", "/api/admin/password-resets", map[string]string{"email": memberEmail})
	if st != http.StatusCreated {
		t.Fatalf("reset: %d %v", st, body)
	}
	token := tokenOf(t, body["link"].(string), "/reset-password")
	testenv.Golden(t, "testdata/password_reset_created.golden.json", masked(t, body, upperCase("link")))
	if resp, raw := env.request(t, "POST", "/api/admin/password-resets/complete", map[string]string{"token": token, "password": "short"}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("too short a password: %d %s", resp.StatusCode, raw)
	}
	complete := map[string]string{"token": token, "password": "the member's new password"}
	if resp, raw := env.request(t, "POST", "/api/admin/password-resets/complete", complete, "Origin", env.srv.URL); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("complete (the short password must not have used the link up): %d %s", resp.StatusCode, raw)
	}
	if st, _, _ := member.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("the member's session after the reset: %d", st)
	}
	if resp, _ := env.request(t, "POST", "/api/admin/password-resets/complete", complete); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("second use: %d", resp.StatusCode)
	}
	env.signInWith(t, memberEmail, "the member's new password")
}

// TestRevocation: a password change ends the person's other sessions at once and keeps the one
// that changed it; removing a member ends all of theirs; a role change is seen on the next request.
func TestRevocation(t *testing.T) {
	env := setupPeople(t, nil)
	a, b := env.signIn(t, adminEmail), env.signIn(t, adminEmail)
	if st, body, _ := a.do(t, "PUT", "/api/admin/account/password", map[string]string{"currentPassword": "wrong", "newPassword": "another long password"}); st != http.StatusForbidden {
		t.Errorf("wrong current password: %d %v", st, body)
	}
	if st, body, _ := a.do(t, "PUT", "/api/admin/account/password", map[string]string{"currentPassword": password(adminEmail), "newPassword": "another long password"}); st != http.StatusNoContent {
		t.Fatalf("change: %d %v", st, body)
	}
	if st, _, _ := b.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("the other session after a password change: %d", st)
	}
	if st, _, _ := a.do(t, "GET", "/api/admin/session", nil); st != http.StatusOK {
		t.Errorf("the changing session: %d", st)
	}

	owner := env.signIn(t, ownerEmail)
	member := env.signIn(t, memberEmail)
	uid := controlplane.UserID(memberEmail)
	if st, body, _ := owner.do(t, "PUT", "/api/admin/members/"+uid, map[string]string{"role": "admin"}); st != http.StatusOK {
		t.Fatalf("role change: %d %v", st, body)
	}
	if st, _, _ := member.do(t, "POST", "/api/admin/keys", map[string]string{"name": "now an admin"}); st != http.StatusCreated {
		t.Errorf("after promotion to admin: %d", st)
	}
	st, body, _ := owner.do(t, "GET", "/api/admin/members", nil)
	if st != http.StatusOK {
		t.Fatalf("members: %d", st)
	}
	testenv.Golden(t, "testdata/members_list.golden.json", masked(t, body, upperCase("userId", "createdAt")))
	if st, _, _ := owner.do(t, "DELETE", "/api/admin/members/"+uid, nil); st != http.StatusNoContent {
		t.Fatalf("remove: %d", st)
	}
	if st, _, _ := member.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("the removed member's session: %d", st)
	}
	// The last owner can neither leave nor be demoted.
	ownerID := controlplane.UserID(ownerEmail)
	for _, req := range []struct{ method, body string }{{"PUT", "member"}, {"DELETE", ""}} {
		st, body, _ := owner.do(t, req.method, "/api/admin/members/"+ownerID, map[string]string{"role": req.body})
		if code, _ := refusal(body); st != http.StatusConflict || code != "conflict" {
			t.Errorf("%s the last owner: %d %v", req.method, st, body)
		}
	}
	entries, _ := env.store.AuditLog(testenv.Ctx(t), env.ws["acme"].ID, 200)
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Action] = true
	}
	for _, want := range []string{"user.password_change", "user.sessions_revoke", "member.role_change", "member.remove", "user.sign_in"} {
		if !seen[want] {
			t.Errorf("no %s in the audit log", want)
		}
	}
}

// TestCookieOnReportingAPI: the cookie authenticates /api/v1 in the workspace X-Revtrack-Workspace
// names when the person is a member of it (403 otherwise), optional with one workspace, required
// with several; a bearer key wins over a cookie; no cookie and no key is 401.
func TestCookieOnReportingAPI(t *testing.T) {
	env := setupPeople(t, nil)
	path := "/api/v1/tracking/sources/no-such-source/status"
	member, multi := env.signIn(t, memberEmail), env.signIn(t, multiEmail)
	for _, c := range []struct {
		name string
		b    *signedIn
		ws   string
		want int
	}{
		{"one workspace, no header", member, "", http.StatusNotFound},
		{"its workspace", member, "acme", http.StatusNotFound},
		{"not a member", member, "other", http.StatusForbidden},
		{"several workspaces, no header", multi, "", http.StatusBadRequest},
		{"several workspaces, one named", multi, "other", http.StatusNotFound},
	} {
		c.b.workspace = c.ws
		if st, body, _ := c.b.do(t, "GET", path, nil); st != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, st, body, c.want)
		}
	}
	member.workspace = ""
	if st, _, _ := member.do(t, "GET", path, nil, "Authorization", "Bearer revtrack_sk_invalid"); st != http.StatusUnauthorized {
		t.Errorf("an invalid key with a valid cookie: %d (the key must decide)", st)
	}
	if resp, _ := env.request(t, "GET", path, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("neither: %d", resp.StatusCode)
	}
	if resp, _ := env.request(t, "GET", path, nil, "Authorization", "Bearer "+env.adminKey, "Cookie", authn.CookieName+"=junk"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a key with a junk cookie: %d", resp.StatusCode)
	}
	// What authenticating a session costs next to a key (logged, not asserted): the session's
	// Redis read and touch, the user and the memberships from ClickHouse.
	const n = 30
	start := time.Now()
	for range n {
		member.do(t, "GET", path, nil)
	}
	bySession := time.Since(start) / n
	start = time.Now()
	for range n {
		env.request(t, "GET", path, nil, "Authorization", "Bearer "+env.adminKey)
	}
	t.Logf("mean request time over %d requests: session %v, key %v", n, bySession, time.Since(start)/n)
}
