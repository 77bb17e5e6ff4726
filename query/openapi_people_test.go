package query_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// peopleState carries what the console sign-in calls learn from one another: one-time tokens, the
// cookie and CSRF token of a session, a member's ID.
type peopleState struct {
	ownerToken, memberToken, resetToken string
	memberID, ownerID                   string
	session                             map[string]string // Cookie and X-CSRF-Token of the owner's session
	cookieOnly                          map[string]string // the Cookie alone
}

func tokenIn(t *testing.T, body []byte) string {
	t.Helper()
	var v struct {
		Link string `json:"link"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(v.Link)
	if err != nil {
		t.Fatal(err)
	}
	_, tok, ok := strings.Cut(u.Fragment, "?token=")
	if !ok {
		t.Fatalf("link %q has no token in its fragment", v.Link)
	}
	return tok
}

// peopleCalls: console sign-in end to end through `revtrack all` (docs/API.md "Console
// sessions"): an admin key invites an owner and a member, the owner accepts (signed in) and signs
// in again, reads and changes their account, the member's role changes, a reset link is made and
// used, the member is removed, the owner signs out; with the refusals on the way.
func (e contractEnv) peopleCalls() []call {
	st := &peopleState{session: map[string]string{}, cookieOnly: map[string]string{}}
	const ownerEmail, memberEmail, ownerPassword = "owner@people.example", "member@people.example", "the owner's password"
	acceptOwner := map[string]any{"name": "Owner", "password": ownerPassword}
	acceptMember := map[string]any{"name": "Member", "password": "the member's password"}
	reset := map[string]any{"password": "the member's new password"}
	return []call{
		{name: "invite an owner", method: "POST", path: "/api/admin/invitations", key: e.admin,
			body: map[string]any{"email": ownerEmail, "role": "owner"}, want: 201,
			after: func(t *testing.T, b []byte) { st.ownerToken = tokenIn(t, b) }},
		{name: "invite a member", method: "POST", path: "/api/admin/invitations", key: e.admin,
			body: map[string]any{"email": memberEmail, "role": "member"}, want: 201,
			after: func(t *testing.T, b []byte) { st.memberToken = tokenIn(t, b) }},
		{name: "invite with a read key", method: "POST", path: "/api/admin/invitations", key: e.read,
			body: map[string]any{"email": "x@people.example", "role": "member"}, want: 403},
		{name: "accept an invitation", method: "POST", path: "/api/admin/invitations/accept", want: 200,
			before: func(*testing.T) { acceptOwner["token"] = st.ownerToken }, body: acceptOwner},
		{name: "accept the member's invitation", method: "POST", path: "/api/admin/invitations/accept", want: 200,
			before: func(*testing.T) { acceptMember["token"] = st.memberToken }, body: acceptMember},
		{name: "accept a used invitation", method: "POST", path: "/api/admin/invitations/accept", want: 400, body: acceptOwner},
		{name: "sign in with a wrong password", method: "POST", path: "/api/admin/session", want: 401,
			body: map[string]any{"email": ownerEmail, "password": "not the password"}},
		{name: "sign in from a foreign origin", method: "POST", path: "/api/admin/session", want: 403,
			header: map[string]string{"Origin": "https://elsewhere.example"}, body: map[string]any{"email": ownerEmail, "password": ownerPassword}},
		{name: "sign in", method: "POST", path: "/api/admin/session", want: 200,
			body: map[string]any{"email": ownerEmail, "password": ownerPassword}},
		{name: "session without a cookie", method: "GET", path: "/api/admin/session", want: 401},
		// The contract run sees bodies, not Set-Cookie: this sign-in keeps the cookie for the calls.
		{name: "session", method: "GET", path: "/api/admin/session", header: st.cookieOnly, want: 200,
			before: func(t *testing.T) { e.signInFor(t, st, ownerEmail, ownerPassword) }},
		{name: "account without the CSRF token", method: "PUT", path: "/api/admin/account", header: st.cookieOnly,
			body: map[string]any{"name": "Owner Person"}, want: 403, invalidRequest: true},
		{name: "account", method: "PUT", path: "/api/admin/account", header: st.session, body: map[string]any{"name": "Owner Person"}, want: 200},
		{name: "members", method: "GET", path: "/api/admin/members", key: e.admin, want: 200,
			after: func(t *testing.T, b []byte) {
				var v struct {
					Members []struct{ UserID, Email string }
				}
				_ = json.Unmarshal(b, &v)
				for _, m := range v.Members {
					switch m.Email {
					case memberEmail:
						st.memberID = m.UserID
					case ownerEmail:
						st.ownerID = m.UserID
					}
				}
			}},
		{name: "members as the owner's session", method: "GET", path: "/api/admin/members", header: st.cookieOnly, want: 200},
		{name: "member role", method: "PUT", pathFn: func() string { return "/api/admin/members/" + st.memberID }, header: st.session,
			body: map[string]any{"role": "admin"}, want: 200},
		{name: "unknown member", method: "PUT", path: "/api/admin/members/nobody", header: st.session, body: map[string]any{"role": "admin"}, want: 404},
		{name: "password reset for a stranger", method: "POST", path: "/api/admin/password-resets", header: st.session,
			body: map[string]any{"email": "stranger@people.example"}, want: 404},
		{name: "password reset", method: "POST", path: "/api/admin/password-resets", header: st.session,
			body: map[string]any{"email": memberEmail}, want: 201, after: func(t *testing.T, b []byte) { st.resetToken = tokenIn(t, b) }},
		{name: "complete a password reset", method: "POST", path: "/api/admin/password-resets/complete", want: 204,
			before: func(*testing.T) { reset["token"] = st.resetToken }, body: reset},
		{name: "complete a used password reset", method: "POST", path: "/api/admin/password-resets/complete", want: 400, body: reset},
		{name: "change password with a wrong current one", method: "PUT", path: "/api/admin/account/password", header: st.session,
			body: map[string]any{"currentPassword": "wrong", "newPassword": "the owner's new password"}, want: 403},
		{name: "change password", method: "PUT", path: "/api/admin/account/password", header: st.session,
			body: map[string]any{"currentPassword": ownerPassword, "newPassword": "the owner's new password"}, want: 204},
		{name: "remove a member", method: "DELETE", pathFn: func() string { return "/api/admin/members/" + st.memberID }, header: st.session, want: 204},
		{name: "remove the last owner", method: "DELETE", pathFn: func() string { return "/api/admin/members/" + st.ownerID },
			header: st.session, want: 409},
		{name: "sign out", method: "DELETE", path: "/api/admin/session", header: st.session, want: 204},
		{name: "signed out", method: "DELETE", path: "/api/admin/session", header: st.session, want: 401},
	}
}

// signInFor signs in outside the contract run and keeps the session's cookie and CSRF token in
// st's header maps, which later calls send.
func (e contractEnv) signInFor(t *testing.T, st *peopleState, email, password string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	resp, err := http.Post(e.base+"/api/admin/session", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d %v", resp.StatusCode, err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "revtrack_session" {
			st.session["Cookie"] = c.Name + "=" + c.Value
			st.cookieOnly["Cookie"] = c.Name + "=" + c.Value
		}
	}
	st.session["X-CSRF-Token"] = v.CSRFToken
}
