package adminapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader"
	"github.com/revtrack/revtrack/uploader/google"
)

// The begin link binds the first browser that opens it (an HttpOnly, SameSite=Lax cookie on the
// flow's paths); a browser that reaches the callback without that cookie, even through the same
// Google consent URL, is refused and does not spend the flow.
func TestAdsFlowIsBoundToTheBrowserThatBegan(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	link := f.start(t)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(cookie, "revtrack_ads_oauth=") || !strings.Contains(cookie, "Path=/api/admin/ads/oauth/") ||
		!strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") || strings.Contains(cookie, "Secure") ||
		resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("begin: %d %v", resp.StatusCode, resp.Header)
	}
	if status, _, page := follow(t, browser(t), link, "application/json"); status != 400 || !strings.Contains(page, "already opened") {
		t.Fatalf("the begin link opened again: %d %s", status, page)
	}

	owner := browser(t)
	consent := f.begin(t, owner, f.start(t))
	// Someone else with the consent URL (forwarded, shoulder-surfed) consents in their browser.
	status, path, page := follow(t, browser(t), consent, "")
	if status != 403 || path != uploader.OAuthCallbackPath || !strings.Contains(page, "this browser did not start the connection") {
		t.Fatalf("another browser at the callback: %d %s %s", status, path, page)
	}
	if status, body := f.json(t, "GET", "/api/admin/ads/connection", f.admin, nil); status != 200 || body["state"] != "disconnected" {
		t.Fatalf("another browser connected: %v", body)
	}
	status, _, page = follow(t, owner, consent, "")
	if status != 200 || !strings.Contains(page, "<h1>Connected</h1>") {
		t.Fatalf("the browser that began: %d %s", status, page)
	}
	u, _ := url.Parse(f.srv.URL + "/api/admin/ads/oauth/")
	for _, c := range owner.Jar.Cookies(u) {
		if c.Name == "revtrack_ads_oauth" {
			t.Fatal("the flow's cookie outlived the connection")
		}
	}
}

// The callback checks the key that started the flow again: revoked meanwhile, nothing is stored;
// a lapsed subscription likewise.
func TestAdsCallbackAfterTheStartingKeyIsRevoked(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	ctx := testenv.Ctx(t)
	temp, k, err := f.store.CreateAPIKey(ctx, "test", "acme", "temporary", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	_, body := f.json(t, "POST", "/api/admin/ads/connection", temp, nil)
	b := browser(t)
	consent := f.begin(t, b, body["authorizationUrl"].(string))
	if status, body := f.json(t, "POST", "/api/admin/keys/"+k.ID+"/revoke", f.admin, nil); status != 200 {
		t.Fatalf("revoke: %d %v", status, body)
	}
	status, _, text := follow(t, b, consent, "application/json")
	if status != 403 || !strings.Contains(text, `"forbidden"`) || !strings.Contains(text, "revoked") {
		t.Fatalf("callback after the key was revoked: %d %s", status, text)
	}

	b = browser(t)
	consent = f.begin(t, b, f.start(t))
	if _, err := f.store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusPastDue); err != nil {
		t.Fatal(err)
	}
	status, _, text = follow(t, b, consent, "application/json")
	if status != 403 || !strings.Contains(text, `"subscription_inactive"`) {
		t.Fatalf("callback after the subscription lapsed: %d %s", status, text)
	}
	if _, ok, err := f.setup.Connection(ctx, f.ws); ok || err != nil {
		t.Fatalf("a refused callback connected: %v %v", ok, err)
	}
}

var hiddenRe = regexp.MustCompile(`name="(pending|csrfToken)" value="([^"]+)"`)

// A reconnection by another Google account shows both accounts and waits for a confirmation from
// the same browser with the page's CSRF token; "keep" leaves the live connection.
func TestAdsReplacementIsConfirmedInTheBrowser(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	if status, page := f.connect(t); status != 200 {
		t.Fatalf("first connection: %d %s", status, page)
	}
	other := google.Account{ID: "104592000000000000042", Email: "someone-else@example.com"}
	f.fake.SignIn(other)
	b := browser(t)
	status, path, page := follow(t, b, f.start(t), "")
	if status != 202 || path != uploader.OAuthCallbackPath || !strings.Contains(page, googlefake.DefaultAccount.Email) || !strings.Contains(page, other.Email) {
		t.Fatalf("replacement page: %d %s %s", status, path, page)
	}
	form := map[string]string{}
	for _, m := range hiddenRe.FindAllStringSubmatch(page, -1) {
		form[m[1]] = m[2]
	}
	masked := strings.NewReplacer(form["pending"], "PENDING", form["csrfToken"], "CSRF", f.srv.URL, "http://revtrack.test").Replace(page)
	masked = regexp.MustCompile(`expires at [0-9TZ:-]+`).ReplaceAllString(masked, "expires at EXPIRES")
	testenv.Golden(t, "testdata/ads_replacement_page.golden.html", []byte(masked))

	post := func(c *http.Client, pending, csrf, decision string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", f.srv.URL+uploader.OAuthConfirmPath,
			strings.NewReader(url.Values{"pending": {pending}, "csrfToken": {csrf}, "decision": {decision}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	if status, text := post(browser(t), form["pending"], form["csrfToken"], "replace"); status != 403 || !strings.Contains(text, "this browser did not start") {
		t.Fatalf("confirm from another browser: %d %s", status, text)
	}
	if status, text := post(b, form["pending"], "forged", "replace"); status != 403 || !strings.Contains(text, "CSRF") {
		t.Fatalf("confirm with a forged CSRF token: %d %s", status, text)
	}
	if status, text := post(b, form["pending"], form["csrfToken"], "maybe"); status != 400 {
		t.Fatalf("confirm with an unknown decision: %d %s", status, text)
	}
	status, text := post(b, form["pending"], form["csrfToken"], "replace")
	if status != 200 || !strings.Contains(text, `"replaced":true`) || !strings.Contains(text, other.Email) {
		t.Fatalf("confirm: %d %s", status, text)
	}
	if _, body := f.json(t, "GET", "/api/admin/ads/connection", f.admin, nil); body["connection"].(map[string]any)["googleAccountEmail"] != other.Email {
		t.Fatalf("after confirming: %v", body)
	}

	// JSON clients get the same choice; keep drops the held grant.
	f.fake.SignIn(googlefake.DefaultAccount)
	b = browser(t)
	status, _, text = follow(t, b, f.start(t), "application/json")
	var held struct {
		Replacement struct {
			ID                         string
			CurrentAccount, NewAccount google.Account
		}
		ConfirmURL, CSRFToken string
	}
	if err := json.Unmarshal([]byte(text), &held); status != 202 || err != nil || held.Replacement.CurrentAccount != other ||
		held.Replacement.NewAccount != googlefake.DefaultAccount || held.ConfirmURL != f.srv.URL+uploader.OAuthConfirmPath || held.CSRFToken == "" {
		t.Fatalf("held as JSON: %d %s", status, text)
	}
	if status, text := post(b, held.Replacement.ID, held.CSRFToken, "keep"); status != 200 || !strings.Contains(text, `"replaced":false`) ||
		!strings.Contains(text, other.Email) {
		t.Fatalf("keep: %d %s", status, text)
	}
	actions := f.auditActions(t)
	for _, want := range []string{"ads_connection.replacement_held", "ads_connection.reconnect", "ads_connection.replacement_declined"} {
		if !strings.HasPrefix(actions[want], "key:") {
			t.Errorf("audit lacks %s by the key (%v)", want, actions)
		}
	}
}
