package uploader_test

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader"
	"github.com/revtrack/revtrack/uploader/google"
)

// adminKey creates a key of scope in the workspace and returns its ID (the flow keeps only that).
func (e *setupEnv) adminKey(scope string) string {
	e.t.Helper()
	_, k, err := e.tenant.Store.CreateAPIKey(e.ctx, "test", "acme", "ops-"+scope, scope)
	if err != nil {
		e.t.Fatal(err)
	}
	return k.ID
}

// browserFlow starts a connection with keyID as the admin API does, opens the begin link (the
// browser's binding is returned) and follows Google's consent to the state and code of the callback.
func (e *setupEnv) browserFlow(keyID string) (state, code, binding string) {
	e.t.Helper()
	start, err := e.setup.ConnectWithKey(e.ctx, "key:"+keyID, keyID, e.ws)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := url.Parse(start.BeginURL)
	if !strings.HasPrefix(start.BeginURL, "http://127.0.0.1:8080"+uploader.OAuthBeginPath+"?flow=") || u.Query().Get("flow") == "" {
		e.t.Fatalf("begin URL %s", start.BeginURL)
	}
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
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		e.t.Fatalf("consent page: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("state"), loc.Query().Get("code"), b.Binding
}

func forbidden(err error) bool {
	var fe *uploader.ForbiddenError
	return errors.As(err, &fe)
}

// Only the browser that opened the begin link finishes the flow: another browser (another cookie,
// or none) and the command line are refused without using the state up.
func TestBrowserFlowIsBoundToTheBrowserThatBegan(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	key := e.adminKey(controlplane.ScopeAdmin)
	start, err := e.setup.ConnectWithKey(e.ctx, "key:"+key, key, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	flow, _ := url.Parse(start.BeginURL)
	if _, err := e.setup.Begin(e.ctx, flow.Query().Get("flow")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.Begin(e.ctx, flow.Query().Get("flow")); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("a begin link opened twice: %v", err)
	}
	if base, path := e.setup.FlowLocation(); base != "http://127.0.0.1:8080" || path != "/api/admin/ads/oauth/" {
		t.Fatalf("flow location %s %s", base, path)
	}

	state, code, binding := e.browserFlow(key)
	_, _, otherBinding := e.browserFlow(key) // another flow in another browser
	for name, try := range map[string]func() error{
		"no cookie":        func() error { _, err := e.setup.BrowserCallback(e.ctx, state, code, ""); return err },
		"another cookie":   func() error { _, err := e.setup.BrowserCallback(e.ctx, state, code, otherBinding); return err },
		"a forged cookie":  func() error { _, err := e.setup.BrowserCallback(e.ctx, state, code, binding+"x"); return err },
		"Google's refusal": func() error { _, err := e.setup.BrowserCallback(e.ctx, state, "", "wrong"); return err },
	} {
		if err := try(); !forbidden(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := e.setup.Callback(e.ctx, state, code); !errors.Is(err, uploader.ErrInvalid) || !strings.Contains(err.Error(), "browser") {
		t.Fatalf("the command line finishing a browser's flow: %v", err)
	}
	res, err := e.setup.BrowserCallback(e.ctx, state, code, binding)
	if err != nil || res.Pending != nil {
		t.Fatalf("the browser that began: %+v %v", res, err)
	}
	c := res.Connection
	if !c.Connected() || c.ConnectedBy != "key:"+key || c.GoogleAccountID != googlefake.DefaultAccount.ID ||
		c.GoogleAccountEmail != googlefake.DefaultAccount.Email || !slices.Equal(c.GrantedScopes, []string{google.ScopeAdWords, google.ScopeDataManager}) {
		t.Fatalf("connection %+v", c)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("a state used twice: %v", err)
	}

	// The command line's flow is finished on the command line only.
	opState, opCode := e.consent()
	if _, err := e.setup.BrowserCallback(e.ctx, opState, opCode, binding); !errors.Is(err, uploader.ErrInvalid) ||
		!strings.Contains(err.Error(), "command line") {
		t.Fatalf("a browser finishing the command line's flow: %v", err)
	}
	if _, err := e.setup.Callback(e.ctx, opState, opCode); err != nil {
		t.Fatalf("the command line after a browser's refused attempt: %v", err)
	}
}

// The callback checks again that the key that started the flow may connect the workspace: a
// revoked key, a key without the admin scope and a lapsed subscription store nothing (and the code
// is not even exchanged).
func TestCallbackRevalidatesTheStartingKey(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	exchanges := func() int {
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Path == "/token" {
				n++
			}
		}
		return n
	}

	key := e.adminKey(controlplane.ScopeAdmin)
	state, code, binding := e.browserFlow(key)
	if _, err := e.tenant.Store.RevokeAPIKey(e.ctx, "test", key); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !forbidden(err) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("callback after the key was revoked: %v", err)
	}
	// A begin link of the revoked key is refused too.
	start, err := e.setup.ConnectWithKey(e.ctx, "key:"+key, key, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	flow, _ := url.Parse(start.BeginURL)
	if _, err := e.setup.Begin(e.ctx, flow.Query().Get("flow")); !forbidden(err) {
		t.Fatalf("begin with a revoked key: %v", err)
	}

	// A key that lost the admin scope (a later version of its record says read).
	downgraded := e.adminKey(controlplane.ScopeAdmin)
	state, code, binding = e.browserFlow(downgraded)
	if err := e.db.Conn.Exec(e.ctx, `INSERT INTO api_keys (key_id, workspace_id, name, key_hash, created_by, created_at, revoked_at, version, scope)
SELECT key_id, workspace_id, name, key_hash, created_by, created_at, revoked_at, version + 1, 'read' FROM api_keys WHERE key_id = ?`, downgraded); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !forbidden(err) || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("callback of a key without the admin scope: %v", err)
	}
	reader := e.adminKey(controlplane.ScopeRead)
	start, err = e.setup.ConnectWithKey(e.ctx, "key:"+reader, reader, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	flow, _ = url.Parse(start.BeginURL)
	if _, err := e.setup.Begin(e.ctx, flow.Query().Get("flow")); !forbidden(err) {
		t.Fatalf("begin with a read key: %v", err)
	}

	admin := e.adminKey(controlplane.ScopeAdmin)
	state, code, binding = e.browserFlow(admin)
	if _, err := e.tenant.Store.SetSubscriptionStatus(e.ctx, "test", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); !errors.Is(err, controlplane.ErrInactiveSubs) {
		t.Fatalf("callback after the subscription lapsed: %v", err)
	}
	if n := exchanges(); n != 0 {
		t.Fatalf("%d codes exchanged for refused flows", n)
	}
	if _, ok, err := e.setup.Connection(e.ctx, e.ws); ok || err != nil {
		t.Fatalf("a refused flow connected: %v %v", ok, err)
	}
}

// A reconnection by another Google account than the live connection's is held, sealed, until the
// browser that began it confirms (with the page's CSRF token); the same account reconnects at once;
// a declined or changed replacement leaves the live connection.
func TestReplacementByAnotherGoogleAccountIsConfirmed(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	key := e.adminKey(controlplane.ScopeAdmin)
	state, code, binding := e.browserFlow(key)
	if _, err := e.setup.BrowserCallback(e.ctx, state, code, binding); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, googlefake.DefaultCustomerID, googlefake.DefaultManagerID); err != nil {
		t.Fatal(err)
	}
	m := e.mapping("paid", googlefake.DefaultActionID)
	first := e.token()

	other := google.Account{ID: "104592000000000000077", Email: "intruder@example.com"}
	e.fake.SignIn(other)
	state, code, binding = e.browserFlow(key)
	res, err := e.setup.BrowserCallback(e.ctx, state, code, binding)
	if err != nil || res.Pending == nil {
		t.Fatalf("another account's callback: %+v %v", res, err)
	}
	held := res.Pending
	if held.CurrentAccount != googlefake.DefaultAccount || held.NewAccount != other || held.CSRFToken == "" || held.ID == "" {
		t.Fatalf("held %+v", held)
	}
	if e.token() != first || e.connection().GoogleAccountID != googlefake.DefaultAccount.ID {
		t.Fatal("a held replacement changed the live connection")
	}
	heldKey := e.db.RedisC.KeyPrefix + "ads:oauth-held:" + held.ID
	if ttl, err := e.db.Redis.TTL(e.ctx, heldKey).Result(); err != nil || ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("held grant TTL %v %v", ttl, err)
	}
	raw, err := e.db.Redis.Get(e.ctx, heldKey).Result()
	if err != nil || !strings.Contains(raw, `"sealed":"v1:`) || strings.Contains(raw, held.CSRFToken) || strings.Contains(raw, binding) {
		t.Fatalf("held grant as stored: %v", err)
	}

	if _, err := e.setup.ConfirmReplacement(e.ctx, held.ID, "other", held.CSRFToken, true); !forbidden(err) {
		t.Errorf("confirm from another browser: %v", err)
	}
	if _, err := e.setup.ConfirmReplacement(e.ctx, held.ID, binding, "", true); !forbidden(err) {
		t.Errorf("confirm without the CSRF token: %v", err)
	}
	if _, err := e.setup.ConfirmReplacementOperator(e.ctx, held.ID, true); !errors.Is(err, uploader.ErrInvalid) {
		t.Errorf("confirm on the command line: %v", err)
	}
	c, err := e.setup.ConfirmReplacement(e.ctx, held.ID, binding, held.CSRFToken, true)
	if err != nil || c.GoogleAccountID != other.ID || c.GoogleAccountEmail != other.Email || c.ConversionCustomerID != googlefake.DefaultCustomerID {
		t.Fatalf("confirmed: %+v %v", c, err)
	}
	second := e.token()
	if second == first || strings.Contains(raw, second) {
		t.Fatal("the confirmed grant is not the stored credential, or it was held in plain text")
	}
	if got, err := e.setup.GetMapping(e.ctx, e.ws, m.MappingID); err != nil || !got.Enabled {
		t.Fatalf("mapping after the replacement: %+v %v", got, err)
	}
	if _, err := e.setup.ConfirmReplacement(e.ctx, held.ID, binding, held.CSRFToken, true); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("settled twice: %v", err)
	}

	// The same account again reconnects without a question.
	state, code, binding = e.browserFlow(key)
	if res, err := e.setup.BrowserCallback(e.ctx, state, code, binding); err != nil || res.Pending != nil || e.token() == second {
		t.Fatalf("the same account reconnecting: %+v %v", res.Pending, err)
	}

	// Declined: nothing changes and the held grant is gone.
	e.fake.SignIn(googlefake.DefaultAccount)
	state, code, binding = e.browserFlow(key)
	res, err = e.setup.BrowserCallback(e.ctx, state, code, binding)
	if err != nil || res.Pending == nil {
		t.Fatal(res, err)
	}
	live := e.token()
	if c, err := e.setup.ConfirmReplacement(e.ctx, res.Pending.ID, binding, res.Pending.CSRFToken, false); err != nil || c.GoogleAccountID != other.ID {
		t.Fatalf("declined: %+v %v", c, err)
	}
	if e.token() != live {
		t.Fatal("a declined replacement changed the credential")
	}
	if n, _ := e.db.Redis.Exists(e.ctx, e.db.RedisC.KeyPrefix+"ads:oauth-held:"+res.Pending.ID).Result(); n != 0 {
		t.Fatal("the declined grant is still held")
	}

	// Held, then the connection changes: the confirmation is refused.
	state, code, binding = e.browserFlow(key)
	res, err = e.setup.BrowserCallback(e.ctx, state, code, binding)
	if err != nil || res.Pending == nil {
		t.Fatal(res, err)
	}
	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); err != nil {
		t.Fatal(err)
	}
	if _, err := e.setup.ConfirmReplacement(e.ctx, res.Pending.ID, binding, res.Pending.CSRFToken, true); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("confirming after the connection changed: %v", err)
	}
	want := []string{"ads_connection.replacement_held", "ads_connection.reconnect", "ads_connection.reconnect",
		"ads_connection.replacement_held", "ads_connection.replacement_declined", "ads_connection.replacement_held"}
	if got := e.auditActions(); !containsInOrder(got, want) {
		t.Errorf("audit %v lacks %v in order", got, want)
	}
}

// The command line's flow holds a replacement too, settled with confirm-replacement; a connection
// made before accounts were recorded counts as another account.
func TestOperatorReplacementOfAnUnrecordedAccount(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	if _, err := e.tenant.Store.AdConnections(e.keys).Connect(e.ctx, "cli", e.ws, controlplane.AdGrant{RefreshToken: "1//legacy-token-7171",
		Scopes: []string{google.ScopeAdWords, google.ScopeDataManager}}); err != nil {
		t.Fatal(err)
	}
	state, code := e.consent()
	res, err := e.setup.Callback(e.ctx, state, code)
	if err != nil || res.Pending == nil || res.Pending.CurrentAccount.Known() || res.Pending.NewAccount != googlefake.DefaultAccount {
		t.Fatalf("replacing an unrecorded account: %+v %v", res.Pending, err)
	}
	if _, err := e.setup.ConfirmReplacement(e.ctx, res.Pending.ID, "", res.Pending.CSRFToken, true); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("a browser settling the command line's hold: %v", err)
	}
	c, err := e.setup.ConfirmReplacementOperator(e.ctx, res.Pending.ID, true)
	if err != nil || c.GoogleAccountID != googlefake.DefaultAccount.ID {
		t.Fatalf("confirmed on the command line: %+v %v", c, err)
	}
}

// containsInOrder reports whether want appears in got as a subsequence.
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
