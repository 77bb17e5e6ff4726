package adminapi_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader"
	"github.com/revtrack/revtrack/uploader/google"
)

// TestAdsConnectionOverHTTP walks the connection's states over HTTP: connect through the consent
// redirect to the keyless callback, select the account, list and refresh the conversion actions,
// then disconnect, first with a revocation Google does not confirm, then confirmed.
func TestAdsConnectionOverHTTP(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	ctx := testenv.Ctx(t)

	status, raw := f.raw(t, "GET", "/api/admin/ads/connection", f.admin, nil)
	if status != 200 {
		t.Fatalf("GET before connecting: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_connection_never.golden.json", adsNormalized(t, raw, nil))
	if status, body := f.json(t, "POST", "/api/admin/ads/connection", f.rdr, nil); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("read-scoped key: %d %v", status, body)
	}
	for _, path := range []string{"/api/admin/ads/connection", "/api/admin/ads/mappings", "/api/admin/ads/queue", "/api/admin/ads/verification"} {
		if status, body := f.json(t, "GET", path, f.rdr, nil); status != 403 || body["error"] != "forbidden" {
			t.Errorf("GET %s with a read-scoped key: %d %v", path, status, body)
		}
		if status, body := f.json(t, "GET", path, "", nil); status != 401 {
			t.Errorf("GET %s without a key: %d %v", path, status, body)
		}
	}
	// Nothing that needs a connection works before one exists.
	if status, body := f.json(t, "PUT", "/api/admin/ads/connection/account", f.admin, map[string]any{"conversionCustomerId": "1234567890"}); status != 409 ||
		body["error"] != "conflict" {
		t.Fatalf("select account unconnected: %d %v", status, body)
	}
	if status, body := f.json(t, "DELETE", "/api/admin/ads/connection", f.admin, nil); status != 409 {
		t.Fatalf("disconnect unconnected: %d %v", status, body)
	}

	// The browser's consent: the begin link binds the browser and goes to Google (the fake), which
	// sends it back to the callback without a key.
	authURL, _ := url.Parse(f.begin(t, browser(t), f.start(t)))
	if authURL.Query().Get("redirect_uri") != f.srv.URL+uploader.OAuthCallbackPath || authURL.Query().Get("state") == "" ||
		authURL.Query().Get("code_challenge_method") != "S256" || authURL.Query().Get("access_type") != "offline" {
		t.Fatalf("authorization URL: %s", authURL)
	}
	status, page := f.connect(t)
	if status != 200 || !strings.Contains(page, "<h1>Connected</h1>") || !strings.Contains(page, googlefake.DefaultAccount.Email) {
		t.Fatalf("callback page: %d %s", status, page)
	}
	token, err := f.store.AdConnections(mustKeys(t)).RefreshToken(ctx, f.ws)
	if err != nil || token == "" {
		t.Fatalf("stored token: %v", err)
	}
	status, raw = f.raw(t, "GET", "/api/admin/ads/connection", f.admin, nil)
	if status != 200 || bytes.Contains(raw, []byte(token)) {
		t.Fatalf("GET connected: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_connection_connected.golden.json", adsNormalized(t, raw, nil))

	// Customer IDs are 10 digits (Google's dashed form is accepted).
	for _, req := range []map[string]any{{"conversionCustomerId": "123456789"}, {"conversionCustomerId": "12345678901"},
		{"conversionCustomerId": "1234567890", "loginCustomerId": "98765"}, {"conversionCustomerId": "customers/1234567890"}, {}} {
		if status, body := f.json(t, "PUT", "/api/admin/ads/connection/account", f.admin, req); status != 400 || body["error"] != "invalid_parameter" {
			t.Errorf("select %v: %d %v", req, status, body)
		}
	}
	status, raw = f.raw(t, "PUT", "/api/admin/ads/connection/account", f.admin,
		map[string]any{"conversionCustomerId": "123-456-7890", "loginCustomerId": googlefake.DefaultManagerID})
	if status != 200 {
		t.Fatalf("select account: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_account_selected.golden.json", adsNormalized(t, raw, nil))

	status, raw = f.raw(t, "GET", "/api/admin/ads/conversion-actions", f.admin, nil)
	if status != 200 {
		t.Fatalf("actions: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_conversion_actions.golden.json", adsNormalized(t, raw, nil))
	status, raw = f.raw(t, "POST", "/api/admin/ads/conversion-actions/refresh", f.admin, nil)
	if status != 200 {
		t.Fatalf("refresh actions: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_conversion_actions.golden.json", adsNormalized(t, raw, nil))
	mapping := f.createMapping(t, "paid")

	// Google does not confirm the revocation: 502, the connection stays connected with its
	// credential and shows the failure; the disconnection may be retried.
	f.fake.FailRevocation(http.StatusServiceUnavailable)
	status, body := f.json(t, "DELETE", "/api/admin/ads/connection", f.admin, nil)
	if status != 502 || body["error"] != "revocation_unconfirmed" || !strings.Contains(body["message"].(string), "retry") {
		t.Fatalf("unconfirmed disconnect: %d %v", status, body)
	}
	status, body = f.json(t, "GET", "/api/admin/ads/connection", f.admin, nil)
	conn := body["connection"].(map[string]any)
	if status != 200 || body["state"] != "connected" || conn["state"] != "connected" || conn["lastError"] == "" || body["ready"] != true {
		t.Fatalf("after an unconfirmed disconnect: %d %v", status, body)
	}
	if _, err := f.store.AdConnections(mustKeys(t)).RefreshToken(ctx, f.ws); err != nil || f.fake.Revoked(token) {
		t.Fatalf("the credential was not kept: %v", err)
	}

	f.fake.FailRevocation(0)
	status, raw = f.raw(t, "DELETE", "/api/admin/ads/connection", f.admin, nil)
	if status != 200 {
		t.Fatalf("disconnect: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_connection_disconnected.golden.json", adsNormalized(t, raw, nil))
	if !f.fake.Revoked(token) {
		t.Error("the token was not revoked at Google")
	}
	if _, err := f.store.AdConnections(mustKeys(t)).RefreshToken(ctx, f.ws); err == nil {
		t.Error("the stored token survived the disconnection")
	}
	status, body = f.json(t, "GET", "/api/admin/ads/mappings/"+mapping, f.admin, nil)
	if m := body["mapping"].(map[string]any); status != 200 || m["enabled"] != false || m["disabledReason"] == "" {
		t.Fatalf("mapping after disconnecting: %d %v", status, body)
	}

	actions := f.auditActions(t)
	for _, want := range []string{"ads_connection.connect", "ads_connection.select_account", "ads_conversion_actions.refresh",
		"ads_mapping.create", "ads_mapping.disable", "ads_connection.disconnect_unconfirmed", "ads_connection.disconnect"} {
		if !strings.HasPrefix(actions[want], "key:") {
			t.Errorf("audit lacks %s by the key (%v)", want, actions)
		}
	}
	if strings.Contains(f.logs.String(), token) {
		t.Error("the logs contain the refresh token")
	}
}

// TestAdsCallbackRefusals: the keyless callback takes a state once, reports Google's refusal and a
// partial grant, and answers a browser with a page.
func TestAdsCallbackRefusals(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	callback := func(query string, accept string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.srv.URL+uploader.OAuthCallbackPath+"?"+query, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("callback headers %v", resp.Header)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), b.String()
	}
	for _, q := range []string{"", "code=abc", "state=forged&code=abc", "state=forged&error=access_denied"} {
		status, ctype, body := callback(q, "application/json")
		if status != 400 || !strings.HasPrefix(ctype, "application/json") || !strings.Contains(body, `"error"`) {
			t.Errorf("callback ?%s: %d %s %s", q, status, ctype, body)
		}
	}
	status, ctype, page := callback("state=forged&code=abc", "")
	if status != 400 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(page, "<h1>Not connected</h1>") ||
		!strings.Contains(page, "start the connection again") {
		t.Errorf("browser page: %d %s %s", status, ctype, page)
	}
	testenv.Golden(t, "testdata/ads_callback_refused.golden.html", []byte(page))

	// Declined consent: Google's error is reported and the state is spent.
	b := browser(t)
	authURL, _ := url.Parse(f.begin(t, b, f.start(t)))
	state := authURL.Query().Get("state")
	back := f.srv.URL + uploader.OAuthCallbackPath + "?state=" + url.QueryEscape(state)
	status, _, text := follow(t, b, back+"&error=access_denied", "application/json")
	if status != 400 || !strings.Contains(text, `"access_denied"`) || !strings.Contains(text, "(access_denied)") {
		t.Fatalf("declined consent: %d %s", status, text)
	}
	if status, _, text := follow(t, b, back+"&code="+f.fake.IssueCode(), "application/json"); status != 400 ||
		!strings.Contains(text, "invalid_parameter") {
		t.Fatalf("a spent state was accepted: %d %s", status, text)
	}
	// Hostile error text is not echoed.
	authURL, _ = url.Parse(f.begin(t, b, f.start(t)))
	if _, _, page := callback("state="+url.QueryEscape(authURL.Query().Get("state"))+"&error=%3Cscript%3E", ""); strings.Contains(page, "<script>") {
		t.Fatalf("echoed markup: %s", page)
	}
	if status, body := f.json(t, "GET", "/api/admin/ads/connection", f.admin, nil); status != 200 ||
		body["state"] != "disconnected" || body["connection"] != nil {
		t.Fatalf("a refused consent connected: %v", body)
	}
}

// TestAdsPartialGrant: a consent granting only one of the two scopes stores nothing and names the
// missing scope.
func TestAdsPartialGrant(t *testing.T) {
	cfg := googlefake.DefaultConfig()
	cfg.GrantedScopes = []string{google.ScopeAdWords}
	f := newAdsFixture(t, cfg, true)
	status, _, text := follow(t, browser(t), f.start(t), "application/json")
	if status != 400 || !strings.Contains(text, `"missing_scopes"`) || !strings.Contains(text, `"missingScopes":["`+google.ScopeDataManager+`"]`) {
		t.Fatalf("partial grant: %d %s", status, text)
	}
	if _, ok, err := f.setup.Connection(testenv.Ctx(t), f.ws); ok || err != nil {
		t.Fatalf("a partial grant was stored: %v %v", ok, err)
	}
}

// TestAdsNotConfigured: without an OAuth client the connection is refused with 409
// ads_not_configured; the state is still readable.
func TestAdsNotConfigured(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), false)
	status, body := f.json(t, "GET", "/api/admin/ads/connection", f.admin, nil)
	if status != 200 || body["configured"] != false || body["accountDiscovery"] != false {
		t.Fatalf("GET: %d %v", status, body)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/admin/ads/connection"},
		{"POST", "/api/admin/ads/conversion-actions/refresh"},
	} {
		status, body := f.json(t, c.method, c.path, f.admin, nil)
		if status != 409 || body["error"] != "not_configured" || !strings.Contains(body["message"].(string), "not configured") {
			t.Errorf("%s %s: %d %v", c.method, c.path, status, body)
		}
	}
	status, body = f.json(t, "GET", uploader.OAuthCallbackPath+"?state=s&code=c", "", nil)
	if status != 409 || body["error"] != "not_configured" {
		t.Errorf("callback: %d %v", status, body)
	}
}

func mustKeys(t *testing.T) *controlplane.Keyring {
	t.Helper()
	k, err := controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
