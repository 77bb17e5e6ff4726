package adminapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/testenv"
)

var sessionPlaceholders = upperCase("id", "csrfToken")

// TestSignIn: the right password signs in (body golden, the cookie HttpOnly, SameSite=Strict,
// Path=/, not Secure on a loopback http base URL), GET /session answers the same body; a wrong
// password and an unknown address get the same status and body; every attempt is audited.
func TestSignIn(t *testing.T) {
	env := setupPeople(t, nil)
	resp, raw := env.request(t, "POST", "/api/admin/session", map[string]string{"email": "  Multi@ACME.test ", "password": password(multiEmail)},
		"Origin", env.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, raw)
	}
	testenv.Golden(t, "testdata/session_signed_in.golden.json", maskedJSON(t, raw, sessionPlaceholders))
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == authn.CookieName {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure || len(ck.Value) < 43 {
		t.Fatalf("cookie %+v", ck)
	}
	if h := resp.Header.Get("Cache-Control"); h != "no-store" {
		t.Errorf("Cache-Control %q", h)
	}
	b := env.browserFrom(t, resp, raw)
	st, body, _ := b.do(t, "GET", "/api/admin/session", nil)
	if st != http.StatusOK || body["csrfToken"] != b.csrf {
		t.Fatalf("GET /session: %d %v", st, body)
	}

	wrong, wrongBody := env.request(t, "POST", "/api/admin/session", map[string]string{"email": ownerEmail, "password": "not the password"})
	unknown, unknownBody := env.request(t, "POST", "/api/admin/session", map[string]string{"email": "nobody@acme.test", "password": "not the password"})
	if wrong.StatusCode != http.StatusUnauthorized || unknown.StatusCode != http.StatusUnauthorized || string(wrongBody) != string(unknownBody) {
		t.Fatalf("wrong password %d %s, unknown address %d %s: want the same 401", wrong.StatusCode, wrongBody, unknown.StatusCode, unknownBody)
	}
	testenv.Golden(t, "testdata/session_sign_in_refused.golden.json", maskedJSON(t, wrongBody, nil))
	if len(wrong.Cookies()) != 0 {
		t.Error("a refused sign-in sets a cookie")
	}
	if st, _, _ := (&signedIn{env: env, cookie: "not-a-session"}).do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("GET /session with an unknown cookie: %d", st)
	}
	// Signing in again from the same browser ends the session its cookie held.
	again, raw2 := env.request(t, "POST", "/api/admin/session", map[string]string{"email": multiEmail, "password": password(multiEmail)},
		"Cookie", authn.CookieName+"="+b.cookie)
	if again.StatusCode != http.StatusOK {
		t.Fatalf("second sign-in: %d %s", again.StatusCode, raw2)
	}
	if st, _, _ := b.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("the replaced session: %d", st)
	}

	entries, err := env.store.AuditLog(testenv.Ctx(t), env.ws["acme"].ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Action+" "+e.Details["email"]] = true
	}
	for _, want := range []string{"user.sign_in " + multiEmail, "user.sign_in_failed " + ownerEmail} {
		if !seen[want] {
			t.Errorf("no audit entry %q in acme's log", want)
		}
	}
	other, _ := env.store.AuditLog(testenv.Ctx(t), env.ws["other"].ID, 100)
	if len(other) == 0 || !strings.Contains(other[0].Action, "user.sign_in") {
		t.Errorf("multi's sign-in is not in the other workspace's log: %+v", other)
	}
}

// TestSignInThrottled: after the account's allowance of failures even the right password is
// refused with 429 and a Retry-After within the window; the address's allowance counts failures
// across accounts.
func TestSignInThrottled(t *testing.T) {
	env := setupPeople(t, func(c *authn.SessionConfig) {
		c.MaxFailuresPerAccount, c.MaxFailuresPerAddress, c.FailureWindow = 3, 5, time.Minute
	})
	for i := 0; i < 3; i++ {
		if resp, _ := env.request(t, "POST", "/api/admin/session", map[string]string{"email": memberEmail, "password": "wrong password"}); resp.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i, resp.StatusCode)
		}
	}
	resp, raw := env.request(t, "POST", "/api/admin/session", map[string]string{"email": memberEmail, "password": password(memberEmail)})
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || ra < 1 || ra > 60 {
		t.Fatalf("after 3 failures: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	testenv.Golden(t, "testdata/session_throttled.golden.json", maskedJSON(t, raw, map[string]string{"message": "MESSAGE (too many failed sign-ins; try again in N seconds)"}))
	// Other accounts from the same address: two more failures reach the address's five.
	for _, email := range []string{adminEmail, ownerEmail} {
		if resp, _ := env.request(t, "POST", "/api/admin/session", map[string]string{"email": email, "password": "wrong password"}); resp.StatusCode != 401 {
			t.Fatalf("%s: %d", email, resp.StatusCode)
		}
	}
	if resp, _ := env.request(t, "POST", "/api/admin/session", map[string]string{"email": ownerEmail, "password": password(ownerEmail)}); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the address after 5 failures: %d", resp.StatusCode)
	}
}

// TestSessionExpiry: a session unused for the idle timeout ends; one used all along ends at the
// absolute timeout; an ended session stays ended when the clock is moved back.
func TestSessionExpiry(t *testing.T) {
	env := setupPeople(t, func(c *authn.SessionConfig) { c.IdleTimeout, c.AbsoluteTimeout = time.Hour, 3*time.Hour })
	idle := env.signIn(t, memberEmail)
	busy := env.signIn(t, memberEmail)
	env.advance(59 * time.Minute)
	for _, b := range []*signedIn{idle, busy} {
		if st, _, _ := b.do(t, "GET", "/api/admin/session", nil); st != http.StatusOK {
			t.Fatalf("59 minutes after sign-in: %d", st)
		}
	}
	// busy keeps using its session every 50 minutes; idle is left alone after its last use.
	for elapsed := 59 * time.Minute; elapsed < 3*time.Hour-50*time.Minute; elapsed += 50 * time.Minute {
		env.advance(50 * time.Minute)
		if st, _, _ := busy.do(t, "GET", "/api/admin/members", nil); st != http.StatusOK {
			t.Fatalf("busy session after %v: %d", elapsed+50*time.Minute, st)
		}
	}
	if st, _, _ := idle.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("a session idle for over an hour: %d", st)
	}
	env.advance(50 * time.Minute) // past 3 hours since sign-in
	if st, body, _ := busy.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("past the absolute timeout: %d %v", st, body)
	}
	env.advance(-2 * time.Hour)
	if st, _, _ := busy.do(t, "GET", "/api/admin/session", nil); st != http.StatusUnauthorized {
		t.Errorf("an ended session came back: %d", st)
	}
}

// TestCookieSecure: the cookie is Secure unless the base URL is plain http on a loopback host.
func TestCookieSecure(t *testing.T) {
	for base, secure := range map[string]bool{"http://127.0.0.1:8080": false, "http://localhost:8080": false, "http://[::1]:8080": false,
		"https://console.example.com": true, "http://console.example.com": true, "https://localhost": true} {
		s, err := authn.NewSessions(nil, "x:", authn.DefaultSessionConfig(), base)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Cookie("id")
		if c.Secure != secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
			t.Errorf("%s: Secure %v HttpOnly %v SameSite %v", base, c.Secure, c.HttpOnly, c.SameSite)
		}
	}
}

// TestCSRF: a state-changing request authenticated by the cookie needs the session's token and,
// when sent, the console's Origin; each refusal says why. Sign-in checks Origin too.
func TestCSRF(t *testing.T) {
	env := setupPeople(t, nil)
	b := env.signIn(t, ownerEmail)
	other := env.signIn(t, adminEmail)
	for name, h := range map[string][]string{
		"missing token":   {authn.CSRFHeader, ""},
		"wrong token":     {authn.CSRFHeader, "x" + b.csrf[1:]},
		"another's token": {authn.CSRFHeader, other.csrf},
		"foreign Origin":  {"Origin", "https://evil.example"},
	} {
		st, body, _ := b.do(t, "PUT", "/api/admin/account", map[string]string{"name": "New"}, h...)
		code, msg := refusal(body)
		if st != http.StatusForbidden || code != "forbidden" {
			t.Errorf("%s: %d %v", name, st, body)
		}
		if name == "foreign Origin" && !strings.Contains(msg, "Origin") || name != "foreign Origin" && !strings.Contains(msg, authn.CSRFHeader) {
			t.Errorf("%s: the message does not say why: %q", name, msg)
		}
		// Workspace routes too.
		if st, _, _ := b.do(t, "POST", "/api/admin/keys", map[string]string{"name": "k"}, h...); st != http.StatusForbidden {
			t.Errorf("%s on POST /keys: %d", name, st)
		}
	}
	if st, body, _ := b.do(t, "PUT", "/api/admin/account", map[string]string{"name": "New name"}); st != http.StatusOK {
		t.Fatalf("with token and Origin: %d %v", st, body)
	}
	// Without Origin (a non-browser client) the token alone passes.
	if st, _, _ := b.do(t, "PUT", "/api/admin/account", map[string]string{"name": "New name"}, "Origin", ""); st != http.StatusOK {
		t.Errorf("token without Origin: %d", st)
	}
	resp, raw := env.request(t, "POST", "/api/admin/session", map[string]string{"email": ownerEmail, "password": password(ownerEmail)},
		"Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("sign-in from a foreign Origin: %d %s", resp.StatusCode, raw)
	}
}
