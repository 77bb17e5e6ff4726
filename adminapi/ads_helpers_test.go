package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/uploader"
)

// adsFixture is the admin API with its advertising routes on the real setup service and upload
// queue, the seeded workspace "acme" (one tracking source of app-1) and the fake Google. The
// OAuth redirect URI is the API's own callback, so following the fake's consent redirect ends
// the connection the way a browser does.
type adsFixture struct {
	fixture
	db     pipeline.DB
	tenant pipeline.Tenant
	ws     string
	fake   *googlefake.Fake
	setup  *uploader.Setup
	logs   *lockedBuffer
}

// newAdsFixture builds the fixture; configured false leaves the OAuth client out (connection off).
func newAdsFixture(t *testing.T, fakeCfg googlefake.Config, configured bool) *adsFixture {
	t.Helper()
	ctx := testenv.Ctx(t)
	f := &adsFixture{db: pipeline.Migrated(t), logs: &lockedBuffer{}}
	f.tenant = pipeline.Seed(t, f.db, "https://app.example")
	s := f.tenant.Store
	w, err := s.WorkspaceBySlug(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	f.ws = w.ID
	if _, err := s.CreateWorkspace(ctx, "test", "other", "other", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	admin, _, err := s.CreateAPIKey(ctx, "test", "acme", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := s.CreateAPIKey(ctx, "test", "acme", "dashboard", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys)
	if err != nil {
		t.Fatal(err)
	}
	f.fake = googlefake.New(fakeCfg)
	google := httptest.NewServer(f.fake)
	t.Cleanup(google.Close)

	log := newJSONLogger(f.logs)
	ads := &adminapi.AdsAPI{Rows: uploader.NewRows(f.db.Conn), Audit: s, Log: log, Verifier: &adminapi.AdsVerifier{CH: f.db.Conn}}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: s, Log: log, Ads: ads}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	cfg := uploader.DefaultConnectConfig()
	cfg.GoogleBaseURL = google.URL
	cfg.Egress.AllowPrivateNetworks = true // the fake listens on loopback
	if configured {
		cfg.OAuthClientID, cfg.OAuthClientSecret = "revtrack-local", "revtrack-local-secret"
	}
	f.setup, err = uploader.NewSetup(uploader.SetupDeps{Config: cfg, BaseURL: srv.URL, Store: s, Keys: keys, Redis: f.db.Redis,
		KeyPrefix: f.db.RedisC.KeyPrefix, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ads.Setup, ads.Verifier.Setup = f.setup, f.setup
	f.fixture = fixture{srv: srv, store: s, admin: admin, rdr: reader}
	return f
}

// raw calls the API with the admin key (or key) and returns the status and the body as sent.
func (f *adsFixture) raw(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s %s: responses must not be cached", method, path)
	}
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// json calls the API and decodes the body.
func (f *adsFixture) json(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	status, raw := f.raw(t, method, path, key, body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	return status, m
}

// browser is a user's browser: it keeps cookies and follows redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// start asks the API for a new connection flow and returns its begin link.
func (f *adsFixture) start(t *testing.T) string {
	t.Helper()
	status, body := f.json(t, "POST", "/api/admin/ads/connection", f.admin, nil)
	begin, _ := body["authorizationUrl"].(string)
	if status != 200 || !strings.HasPrefix(begin, f.srv.URL+uploader.OAuthBeginPath+"?flow=") {
		t.Fatalf("connect: %d %v", status, body)
	}
	return begin
}

// begin opens a begin link in b without following the redirect, and returns Google's consent URL.
func (f *adsFixture) begin(t *testing.T, b *http.Client, link string) string {
	t.Helper()
	noFollow := *b
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("begin: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// follow opens u in b, following every redirect, and returns the final status, path and page.
func follow(t *testing.T, b *http.Client, u string, accept string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Request.URL.Path, string(page)
}

// connect runs the consent as a browser: POST the connection, open the begin link in a browser,
// which goes to Google (the fake) and back to the API's callback. It returns the callback's status
// and page.
func (f *adsFixture) connect(t *testing.T) (int, string) {
	t.Helper()
	status, path, page := follow(t, browser(t), f.start(t), "")
	if path != uploader.OAuthCallbackPath {
		t.Fatalf("consent ended at %s", path)
	}
	return status, page
}

// ready connects and selects the fake's default account through its manager.
func (f *adsFixture) ready(t *testing.T) {
	t.Helper()
	if status, page := f.connect(t); status != 200 {
		t.Fatalf("callback: %d %s", status, page)
	}
	status, body := f.json(t, "PUT", "/api/admin/ads/connection/account", f.admin,
		map[string]any{"conversionCustomerId": googlefake.DefaultCustomerID, "loginCustomerId": googlefake.DefaultManagerID})
	if status != 200 || body["actionsError"] != nil {
		t.Fatalf("select account: %d %v", status, body)
	}
}

// createMapping maps milestone of the seeded source to the fake's first action.
func (f *adsFixture) createMapping(t *testing.T, milestone string) string {
	t.Helper()
	status, body := f.json(t, "POST", "/api/admin/ads/mappings", f.admin, map[string]any{"sourceId": f.tenant.Source.ID,
		"milestone": milestone, "conversionActionId": "7723667020", "consentConfirmed": true})
	if status != 201 {
		t.Fatalf("create mapping: %d %v", status, body)
	}
	return body["mapping"].(map[string]any)["mappingId"].(string)
}

// auditActions are the workspace's audit entries, action → actor.
func (f *adsFixture) auditActions(t *testing.T) map[string]string {
	t.Helper()
	entries, err := f.store.AuditLog(testenv.Ctx(t), f.ws, 200)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		out[e.Action] = e.Actor
	}
	return out
}

// adsNormalized replaces per-run values (IDs, clocks, URLs) so a body can be compared with a golden
// file. ids maps a per-run string to its placeholder wherever it occurs.
func adsNormalized(t *testing.T, raw []byte, ids map[string]string) []byte {
	t.Helper()
	for id, name := range ids {
		raw = bytes.ReplaceAll(raw, []byte(id), []byte(name))
	}
	return maskedJSON(t, raw, upperCase("workspaceId", "connectionId", "connectedBy", "createdAt", "updatedAt", "refreshedAt", "at",
		"eventTime", "nextAttemptAt", "nextCursor"))
}

// insert writes rows into a table with PrepareBatch (18.16 needs the column list).
func insert(t *testing.T, db pipeline.DB, table string, cols []string, rows ...[]any) {
	t.Helper()
	ctx := testenv.Ctx(t)
	b, err := db.Conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := b.Append(r...); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
}

// queueRow is an upload-queue row as the uploader would have written it.
type queueRow struct {
	id, mapping, status, clickType, clickID, diagnostics string
	reasons                                              []string
	created                                              time.Time
}

func (f *adsFixture) insertQueue(t *testing.T, rows ...queueRow) {
	t.Helper()
	cols := []string{"row_id", "workspace_id", "mapping_id", "source_id", "event_id_hash", "transaction_id", "milestone", "acquisition_id",
		"click_id_type", "click_id", "event_time", "value_cents", "currency", "status", "validation_only", "attempts", "next_attempt_at",
		"request_id", "reason_codes", "message", "created_at", "updated_at", "version", "poll_attempts", "diagnostics_status",
		"conversion_customer_id", "login_customer_id", "conversion_action_id", "request_events"}
	var vals [][]any
	for i, r := range rows {
		reasons := r.reasons
		if reasons == nil {
			reasons = []string{}
		}
		var value *int64
		vals = append(vals, []any{r.id, f.ws, r.mapping, f.tenant.Source.ID, "hash-" + r.id, "rt-" + r.id, "paid", "acq-" + r.id,
			r.clickType, r.clickID, r.created.Add(-time.Minute), value, "", r.status, uint8(0), uint16(1), nil,
			"", reasons, "", r.created, r.created, uint64(time.Now().UnixNano()) + uint64(i), uint16(0), r.diagnostics,
			googlefake.DefaultCustomerID, googlefake.DefaultManagerID, "7723667020", uint32(1)})
	}
	insert(t, f.db, "upload_queue", cols, vals...)
}

func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
