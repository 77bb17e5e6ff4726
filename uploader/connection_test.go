package uploader_test

import (
	"errors"
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

// Connection state table, row 1: disconnected → connect and grant scopes → connected, account
// still to select. The stored refresh token is ciphertext bound to the workspace.
func TestConnectGrantsAndStoresSealedToken(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	if _, ok, err := e.setup.Connection(e.ctx, e.ws); err != nil || ok {
		t.Fatalf("before connecting: ok=%v %v", ok, err)
	}

	authURL, err := e.setup.Connect(e.ctx, setupActor, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("access_type") != "offline" || q.Get("prompt") != "consent" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("state") == "" ||
		q.Get("redirect_uri") != "http://127.0.0.1:8080"+uploader.OAuthCallbackPath ||
		!strings.Contains(q.Get("scope"), google.ScopeDataManager) || !strings.Contains(q.Get("scope"), google.ScopeAdWords) {
		t.Fatalf("consent URL %s", authURL)
	}
	// The pending state waits ten minutes at most under the test's prefix.
	key := e.db.RedisC.KeyPrefix + "ads:oauth-state:" + q.Get("state")
	if ttl, err := e.db.Redis.TTL(e.ctx, key).Result(); err != nil || ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("state TTL %v %v", ttl, err)
	}
	if strings.Contains(authURL, "verifier") {
		t.Fatal("the PKCE verifier must not leave the service")
	}

	state, code := e.consent()
	if _, err := e.setup.Callback(e.ctx, state, ""); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("callback without code: %v", err)
	}
	// The failed callback used the state: it is single use.
	if _, err := e.setup.Callback(e.ctx, state, code); !errors.Is(err, uploader.ErrInvalid) || !strings.Contains(err.Error(), "start the connection again") {
		t.Fatalf("reused state: %v", err)
	}
	state, code = e.consent()
	res, err := e.setup.Callback(e.ctx, state, code)
	if err != nil || res.Pending != nil {
		t.Fatal(res.Pending, err)
	}
	c := res.Connection
	if !c.Connected() || c.Ready() || c.ConversionCustomerID != "" || c.ConnectedBy != setupActor || c.WorkspaceID != e.ws ||
		!slices.Equal(c.GrantedScopes, []string{google.ScopeAdWords, google.ScopeDataManager}) || c.SealedWithKey != controlplane.DevelopmentKeyID {
		t.Fatalf("connection %+v", c)
	}
	if _, err := e.setup.Callback(e.ctx, state, code); !errors.Is(err, uploader.ErrInvalid) {
		t.Fatalf("second callback with the same state: %v", err)
	}
	if n, _ := e.db.Redis.Exists(e.ctx, e.db.RedisC.KeyPrefix+"ads:oauth-state:"+state).Result(); n != 0 {
		t.Fatal("the used state is still stored")
	}

	tok := e.token()
	if !strings.HasPrefix(tok, "1//fake-") {
		t.Fatalf("opened token %q is not the fake's refresh token", tok[:8])
	}
	var enc string
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT sealed FROM sealed_secrets WHERE workspace_id = ?`, e.ws).Scan(&enc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "v1:"+controlplane.DevelopmentKeyID+":") || strings.Contains(enc, tok) {
		t.Fatalf("stored token is not ciphertext: %.20q", enc)
	}
	if _, err := e.keys.Open(enc, "another-workspace"); !errors.Is(err, controlplane.ErrCannotOpen) {
		t.Fatalf("the sealed token must be bound to its workspace: %v", err)
	}
	e.assertSecretNowhere(tok)

	// Before an account is selected nothing can be mapped.
	if _, err := e.setup.ListActions(e.ctx, e.ws); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("actions without account: %v", err)
	}
	if _, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, uploader.MappingInput{SourceID: e.tenant.Source.ID, Milestone: "paid",
		ConversionActionID: googlefake.DefaultActionID, ConversionActionName: "x", ConsentConfirmed: true}); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("mapping without account: %v", err)
	}
	if got := e.auditActions(); !slices.Equal(got, []string{"ads_connection.connect"}) {
		t.Errorf("audit %v", got)
	}
}

// Granular consent: a grant without one of the two scopes stores nothing and names the scope.
func TestCallbackRefusesMissingScope(t *testing.T) {
	t.Parallel()
	cfg := googlefake.DefaultConfig()
	cfg.GrantedScopes = []string{google.ScopeDataManager}
	e := newSetupEnv(t, cfg, nil)
	state, code := e.consent()
	_, err := e.setup.Callback(e.ctx, state, code)
	var missing *uploader.MissingScopesError
	if !errors.As(err, &missing) || !errors.Is(err, uploader.ErrInvalid) || !slices.Equal(missing.Missing, []string{google.ScopeAdWords}) ||
		!strings.Contains(err.Error(), google.ScopeAdWords) {
		t.Fatalf("callback: %v", err)
	}
	var n uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT count() FROM ad_connections`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d connection rows stored (%v)", n, err)
	}
	if got := e.auditActions(); len(got) != 0 {
		t.Errorf("audit %v", got)
	}
}

// A reconnection that misses a scope leaves the live connection as it was; a full one replaces
// only the credential (account and mappings stay).
func TestReconnectWhileConnected(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	m := e.mapping("paid", googlefake.DefaultActionID)
	before, first := e.connection(), e.token()

	state, _ := e.consent()
	if _, err := e.setup.Callback(e.ctx, state, e.fake.IssueCode(google.ScopeAdWords)); !errors.Is(err, uploader.ErrInvalid) ||
		!strings.Contains(err.Error(), google.ScopeDataManager) {
		t.Fatalf("partial reconnect: %v", err)
	}
	if e.token() != first {
		t.Fatal("a refused reconnection replaced the credential")
	}

	after := e.connect()
	if after.ConnectionID != before.ConnectionID || after.ConversionCustomerID != googlefake.DefaultCustomerID ||
		after.LoginCustomerID != googlefake.DefaultManagerID || !after.CreatedAt.Equal(before.CreatedAt) {
		t.Fatalf("reconnected: %+v", after)
	}
	second := e.token()
	if second == first {
		t.Fatal("the credential was not replaced")
	}
	if got, err := e.setup.GetMapping(e.ctx, e.ws, m.MappingID); err != nil || !got.Enabled {
		t.Fatalf("mapping after reconnect: %+v %v", got, err)
	}
	e.assertSecretNowhere(first)
	e.assertSecretNowhere(second)
}

// Connection state table, row 2: a change of conversion customer or manager login customer keeps
// the connection connected and disables the existing mappings.
func TestAccountChangeDisablesMappings(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	sel := e.ready()
	if len(sel.Actions) != 2 || sel.Actions[0].ID != googlefake.DefaultActionID2 || len(sel.DisabledMappings) != 0 {
		t.Fatalf("first selection: %+v", sel)
	}
	paid := e.mapping("paid", googlefake.DefaultActionID2)
	if paid.ConversionActionName != "Purchase (offline)" {
		t.Fatalf("name not taken from the discovered actions: %+v", paid)
	}
	install := e.mapping("install", googlefake.DefaultActionID)

	// The same account again (written with hyphens) changes nothing.
	again, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, "123-456-7890", googlefake.DefaultManagerID)
	if err != nil || len(again.DisabledMappings) != 0 || len(again.Actions) != 2 {
		t.Fatalf("same account: %+v %v", again, err)
	}

	for _, bad := range [][2]string{{"12345", ""}, {"", ""}, {"12345678901", ""}, {googlefake.DefaultCustomerID, "98765-4321"}} {
		if _, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, bad[0], bad[1]); !errors.Is(err, uploader.ErrInvalid) {
			t.Errorf("select %q via %q: %v", bad[0], bad[1], err)
		}
	}

	// Without the manager the client is unreachable: the selection stands, the discovery error is
	// reported, and the mappings of the previous selection are disabled.
	changed, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, googlefake.DefaultCustomerID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(changed.DisabledMappings) != 2 || changed.ActionsError == "" || len(changed.Actions) != 0 ||
		changed.Connection.LoginCustomerID != "" || !changed.Connection.Connected() {
		t.Fatalf("changed selection: %+v", changed)
	}
	if c := e.connection(); c.LastError != "" {
		t.Fatalf("an unreachable account is not a refused credential: %q", c.LastError)
	}
	if !strings.Contains(changed.ActionsError, "PERMISSION_DENIED") && !strings.Contains(changed.ActionsError, "403") {
		t.Fatalf("actions error %q", changed.ActionsError)
	}
	for _, id := range []string{paid.MappingID, install.MappingID} {
		m, err := e.setup.GetMapping(e.ctx, e.ws, id)
		if err != nil || m.Enabled || !strings.Contains(m.DisabledReason, "manager login account changed from 9876543210 to none") {
			t.Fatalf("mapping %s: %+v %v", id, m, err)
		}
	}

	// Back through the manager: a mapping an account change disabled never comes back (its queued
	// rows were meant for the previous account); a new mapping is made instead.
	if _, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, googlefake.DefaultCustomerID, googlefake.DefaultManagerID); err != nil {
		t.Fatal(err)
	}
	on := true
	_, err = e.setup.UpdateMapping(e.ctx, setupActor, e.ws, paid.MappingID, uploader.MappingUpdate{Enabled: &on})
	if !errors.Is(err, uploader.ErrConflict) || !strings.Contains(err.Error(), "create a new mapping") ||
		!strings.Contains(err.Error(), "manager login account changed") {
		t.Fatalf("re-enable after an account change: %v", err)
	}
	if m, err := e.setup.GetMapping(e.ctx, e.ws, paid.MappingID); err != nil || m.Enabled || m.DisabledCause != controlplane.AdDisabledByAccountChange {
		t.Fatalf("refused mapping %+v %v", m, err)
	}
	if _, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, uploader.MappingInput{SourceID: e.tenant.Source.ID, Milestone: "paid",
		ConversionActionID: googlefake.DefaultActionID, ConsentConfirmed: true}); err != nil {
		t.Fatalf("a new mapping for the same milestone and action: %v", err)
	}
	want := []string{"ads_connection.connect", "ads_connection.select_account", "ads_conversion_actions.refresh",
		"ads_mapping.create", "ads_mapping.create", "ads_conversion_actions.refresh",
		"ads_mapping.disable", "ads_mapping.disable", "ads_connection.select_account",
		"ads_connection.select_account", "ads_conversion_actions.refresh", "ads_mapping.create"}
	if got := e.auditActions(); !slices.Equal(got, want) {
		t.Errorf("audit\n got %v\nwant %v", got, want)
	}
}

// Connection state table, row 3: a confirmed revocation disconnects, erases the token and disables
// the mappings; mappings and queue rows are kept.
func TestDisconnectConfirmed(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	m := e.mapping("paid", googlefake.DefaultActionID)
	tok := e.token()
	b, err := e.db.Conn.PrepareBatch(e.ctx, `INSERT INTO upload_queue (row_id, workspace_id, mapping_id, status, created_at, updated_at, version)`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := b.Append("uq_1", e.ws, m.MappingID, "validated", now, now, uint64(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}

	c, err := e.setup.Disconnect(e.ctx, setupActor, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	if c.Connected() || c.SealedWithKey != "" || c.LastError != "" {
		t.Fatalf("disconnected: %+v", c)
	}
	if !e.fake.Revoked(tok) {
		t.Fatal("the grant was not revoked at Google")
	}
	if _, err := e.tenant.Store.AdConnections(e.keys).RefreshToken(e.ctx, e.ws); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("token after disconnect: %v", err)
	}
	// Every stored version, not only the latest: the secret rows and the records' token column.
	var copies uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT (SELECT count() FROM sealed_secrets WHERE workspace_id = ?)
  + (SELECT count() FROM ad_connections WHERE workspace_id = ? AND refresh_token_enc != '')`, e.ws, e.ws).Scan(&copies); err != nil || copies != 0 {
		t.Fatalf("%d stored copies of the token after the disconnection (%v)", copies, err)
	}
	ms, err := e.setup.ListMappings(e.ctx, e.ws)
	if err != nil || len(ms) != 1 || ms[0].Enabled || ms[0].DisabledReason == "" {
		t.Fatalf("mappings after disconnect: %+v %v", ms, err)
	}
	var rows uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT count() FROM upload_queue WHERE mapping_id = ?`, m.MappingID).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("queue rows after disconnect: %d %v", rows, err)
	}
	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("second disconnect: %v", err)
	}
	on := true
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{Enabled: &on}); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("re-enable while disconnected: %v", err)
	}

	// No new uploads until a new connection (with an account) and mapping exist.
	again := e.connect()
	if again.ConnectionID == c.ConnectionID || again.ConversionCustomerID != "" {
		t.Fatalf("new connection: %+v", again)
	}
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, m.MappingID, uploader.MappingUpdate{Enabled: &on}); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("re-enable without account: %v", err)
	}
	e.assertSecretNowhere(tok)
	want := []string{"ads_connection.connect", "ads_connection.select_account", "ads_conversion_actions.refresh",
		"ads_mapping.create", "ads_mapping.disable", "ads_connection.disconnect", "ads_connection.connect"}
	if got := e.auditActions(); !slices.Equal(got, want) {
		t.Errorf("audit\n got %v\nwant %v", got, want)
	}
}

// Connection state table, row 4: when Google does not confirm the revocation the connection stays
// connected with its credential, the error is shown, and a retry may succeed.
func TestDisconnectUnconfirmedKeepsCredential(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	m := e.mapping("paid", googlefake.DefaultActionID)
	tok := e.token()

	for _, status := range []int{503, 403} {
		e.fake.FailRevocation(status)
		_, err := e.setup.Disconnect(e.ctx, setupActor, e.ws)
		if !errors.Is(err, uploader.ErrRevocationUnconfirmed) || strings.Contains(err.Error(), tok) {
			t.Fatalf("revocation answered %d: %v", status, err)
		}
		c := e.connection()
		if !c.Connected() || !strings.Contains(c.LastError, "retry") || c.SealedWithKey == "" {
			t.Fatalf("after unconfirmed disconnect: %+v", c)
		}
		if e.token() != tok || e.fake.Revoked(tok) {
			t.Fatal("the credential changed")
		}
		if got, _ := e.setup.GetMapping(e.ctx, e.ws, m.MappingID); !got.Enabled {
			t.Fatal("an unconfirmed disconnection disabled a mapping")
		}
	}
	e.assertSecretNowhere(tok)

	e.fake.FailRevocation(0)
	c, err := e.setup.Disconnect(e.ctx, setupActor, e.ws)
	if err != nil || c.Connected() || c.LastError != "" {
		t.Fatalf("retry: %+v %v", c, err)
	}
	want := []string{"ads_connection.connect", "ads_connection.select_account", "ads_conversion_actions.refresh",
		"ads_mapping.create", "ads_connection.disconnect_unconfirmed", "ads_connection.disconnect_unconfirmed",
		"ads_mapping.disable", "ads_connection.disconnect"}
	if got := e.auditActions(); !slices.Equal(got, want) {
		t.Errorf("audit\n got %v\nwant %v", got, want)
	}
}

// A grant the user already removed in their Google account counts as revoked (400 invalid_token).
func TestDisconnectAfterUserRevokedAtGoogle(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	if !e.fake.RevokeGrant(e.token()) {
		t.Fatal("fake does not know the token")
	}
	// Discovery now fails with the refused credential, which the connection shows.
	if _, err := e.setup.RefreshActions(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("refresh with a revoked grant: %v", err)
	}
	if c := e.connection(); !strings.Contains(c.LastError, "connect again") {
		t.Fatalf("last error %q", c.LastError)
	}
	if c, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); err != nil || c.Connected() {
		t.Fatalf("disconnect: %+v %v", c, err)
	}
}

func TestSetupWithoutOAuthClientOrDiscovery(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), func(c *uploader.ConnectConfig) { c.OAuthClientID, c.OAuthClientSecret = "", "" })
	if e.setup.Configured() {
		t.Fatal("configured without a client ID")
	}
	if _, err := e.setup.Connect(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrNotConfigured) {
		t.Fatalf("connect: %v", err)
	}
	if _, err := e.setup.Callback(e.ctx, "state", "code"); !errors.Is(err, uploader.ErrNotConfigured) {
		t.Fatalf("callback: %v", err)
	}
	if _, err := e.setup.RefreshActions(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrNotConfigured) {
		t.Fatalf("refresh: %v", err)
	}
	if ms, err := e.setup.ListMappings(e.ctx, e.ws); err != nil || ms == nil || len(ms) != 0 {
		t.Fatalf("list: %v %v", ms, err)
	}

	// Discovery off: the account is selected without listing actions; names are typed in.
	e = newSetupEnv(t, googlefake.DefaultConfig(), func(c *uploader.ConnectConfig) { c.AccountDiscovery = false })
	e.connect()
	sel, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, googlefake.DefaultCustomerID, googlefake.DefaultManagerID)
	if err != nil || len(sel.Actions) != 0 || sel.ActionsError != "" || !sel.Connection.Ready() {
		t.Fatalf("select: %+v %v", sel, err)
	}
	if _, err := e.setup.RefreshActions(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrNotConfigured) {
		t.Fatalf("refresh: %v", err)
	}
	in := uploader.MappingInput{SourceID: e.tenant.Source.ID, Milestone: "paid", ConversionActionID: googlefake.DefaultActionID, ConsentConfirmed: true}
	if _, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in); !errors.Is(err, uploader.ErrInvalid) || !strings.Contains(err.Error(), "name is required") {
		t.Fatalf("mapping without name: %v", err)
	}
	in.ConversionActionName = "Purchase"
	if m, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, in); err != nil || m.ConversionActionName != "Purchase" {
		t.Fatalf("mapping: %+v %v", m, err)
	}
}
