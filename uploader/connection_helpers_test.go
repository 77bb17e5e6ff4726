package uploader_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/uploader"
)

// setupEnv is a migrated database with the seeded workspace "acme", the fake Google and a setup
// service pointed at it.
type setupEnv struct {
	t      *testing.T
	ctx    context.Context
	db     pipeline.DB
	tenant pipeline.Tenant
	ws     string
	keys   *controlplane.Keyring
	fake   *googlefake.Fake
	cfg    uploader.ConnectConfig
	setup  *uploader.Setup
}

const setupActor = "owner@acme.example"

func newSetupEnv(t *testing.T, fakeCfg googlefake.Config, tune func(*uploader.ConnectConfig)) *setupEnv {
	t.Helper()
	e := &setupEnv{t: t, ctx: testenv.Ctx(t), db: pipeline.Migrated(t)}
	e.tenant = pipeline.Seed(t, e.db, "https://app.example")
	w, err := e.tenant.Store.WorkspaceBySlug(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	e.ws = w.ID
	if e.keys, err = controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys); err != nil {
		t.Fatal(err)
	}
	e.fake = googlefake.New(fakeCfg)
	srv := httptest.NewServer(e.fake)
	t.Cleanup(srv.Close)
	e.cfg = uploader.DefaultConnectConfig()
	e.cfg.GoogleBaseURL = srv.URL
	e.cfg.Egress.AllowPrivateNetworks = true // the fake listens on loopback
	e.cfg.OAuthClientID, e.cfg.OAuthClientSecret = "revtrack-local", "revtrack-local-secret"
	if tune != nil {
		tune(&e.cfg)
	}
	e.setup, err = uploader.NewSetup(uploader.SetupDeps{Config: e.cfg, BaseURL: "http://127.0.0.1:8080", Store: e.tenant.Store,
		Keys: e.keys, Redis: e.db.Redis, KeyPrefix: e.db.RedisC.KeyPrefix, Logger: pipeline.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// consent starts a connection and follows the fake's consent page, returning the state and code
// Google sends back to the callback.
func (e *setupEnv) consent() (state, code string) {
	e.t.Helper()
	authURL, err := e.setup.Connect(e.ctx, setupActor, e.ws)
	if err != nil {
		e.t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		e.t.Fatalf("consent page: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if !strings.HasPrefix(loc.String(), "http://127.0.0.1:8080"+uploader.OAuthCallbackPath+"?") {
		e.t.Fatalf("redirect to %s", loc)
	}
	return loc.Query().Get("state"), loc.Query().Get("code")
}

// connect runs the whole consent and callback.
func (e *setupEnv) connect() controlplane.AdConnection {
	e.t.Helper()
	state, code := e.consent()
	res, err := e.setup.Callback(e.ctx, state, code)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.Pending != nil {
		e.t.Fatalf("the callback held a replacement: %+v", res.Pending)
	}
	return res.Connection
}

// ready connects and selects the fake's default account through its manager.
func (e *setupEnv) ready() uploader.AccountSelection {
	e.t.Helper()
	e.connect()
	sel, err := e.setup.SelectAccount(e.ctx, setupActor, e.ws, googlefake.DefaultCustomerID, googlefake.DefaultManagerID)
	if err != nil || sel.ActionsError != "" {
		e.t.Fatalf("select account: %+v %v", sel, err)
	}
	return sel
}

func (e *setupEnv) mapping(milestone, actionID string) controlplane.AdMapping {
	e.t.Helper()
	m, err := e.setup.CreateMapping(e.ctx, setupActor, e.ws, uploader.MappingInput{SourceID: e.tenant.Source.ID, Milestone: milestone,
		ConversionActionID: actionID, ConsentConfirmed: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *setupEnv) token() string {
	e.t.Helper()
	tok, err := e.tenant.Store.AdConnections(e.keys).RefreshToken(e.ctx, e.ws)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *setupEnv) connection() controlplane.AdConnection {
	e.t.Helper()
	c, ok, err := e.setup.Connection(e.ctx, e.ws)
	if err != nil || !ok {
		e.t.Fatalf("connection: ok=%v %v", ok, err)
	}
	return c
}

// auditActions lists the workspace's ads audit actions, oldest first.
func (e *setupEnv) auditActions() []string {
	e.t.Helper()
	log, err := e.tenant.Store.AuditLog(e.ctx, e.ws, 500)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, a := range log {
		if strings.HasPrefix(a.Action, "ads_") {
			out = append(out, a.Action)
		}
	}
	slices.Reverse(out)
	return out
}

// assertSecretNowhere checks that no ClickHouse table of the ads setup, no audit entry and no
// Redis value under the test's prefix holds secret in plain text.
func (e *setupEnv) assertSecretNowhere(secret string) {
	e.t.Helper()
	var n uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT
    (SELECT count() FROM ad_connections WHERE position(refresh_token_enc, ?) > 0 OR position(last_error, ?) > 0)
  + (SELECT count() FROM sealed_secrets WHERE position(sealed, ?) > 0)
  + (SELECT count() FROM audit_log WHERE position(details, ?) > 0)
  + (SELECT count() FROM ad_mappings WHERE position(disabled_reason, ?) > 0)`, secret, secret, secret, secret, secret).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	if n != 0 {
		e.t.Fatalf("%d rows hold the refresh token in plain text", n)
	}
	keys, err := e.db.Redis.Keys(e.ctx, e.db.RedisC.KeyPrefix+"*").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, k := range keys {
		if v, err := e.db.Redis.Get(e.ctx, k).Result(); err == nil && strings.Contains(v, secret) {
			e.t.Fatalf("Redis key %s holds the refresh token", k)
		}
	}
}

// The control plane's stores are what the dispatcher reads connections and mappings through.
var (
	_ uploader.Credentials = (*controlplane.AdConnections)(nil)
	_ uploader.Mappings    = (*controlplane.AdMappings)(nil)
)
