package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

// syncFixture is the admin API with its partner-connection and sync-run routes, on a real sync
// service whose partner API is a fake (held at a gate when a test needs a run to stay in flight).
type syncFixture struct {
	fixture
	db      pipeline.DB
	fake    *partnerfake.Server
	fakeURL string
	token   string
	svc     *platformsync.Service
	logs    *lockedBuffer
	gate    chan struct{}
	held    chan struct{}
	holdMu  sync.Mutex
	holding bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func setupSync(t *testing.T) *syncFixture {
	t.Helper()
	ctx := testenv.Ctx(t)
	f := &syncFixture{db: pipeline.Migrated(t), logs: &lockedBuffer{}, held: make(chan struct{}, 100)}
	kc, producer := pipeline.Topics(t)
	s := controlplane.NewStore(f.db.Conn, f.db.Redis, f.db.RedisC.KeyPrefix)

	gen := partnerfake.DemoConfig(time.Now().UTC().Truncate(24 * time.Hour))
	gen.Apps, gen.Shops = 1, 12
	gen.Start = gen.End.AddDate(0, -2, 0)
	ds := partnerfake.Generate(gen)
	scfg := partnerfake.DefaultServerConfig()
	scfg.RequestsPerSecond = 0
	f.fake, f.token = partnerfake.NewServer(ds, scfg), scfg.Tokens[0]
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first, so the server notices a client that gives up while held.
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		f.holdMu.Lock()
		gate := f.gate
		f.holdMu.Unlock()
		if gate != nil {
			f.held <- struct{}{}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		f.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(fake.Close)
	f.fakeURL = fake.URL

	for _, slug := range []string{"acme", "other"} {
		if _, err := s.CreateWorkspace(ctx, "test", slug, slug, controlplane.StatusActive); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutApp(ctx, "test", controlplane.App{ID: "app-1", PlatformAppID: ds.Apps[0].ID, Name: "App"}); err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"acme", "other"} {
		if _, err := s.SetSelectedApps(ctx, "test", slug, []string{"app-1"}); err != nil {
			t.Fatal(err)
		}
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
	log := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := platformsync.DefaultConfig()
	cfg.RequestsPerSecond, cfg.ProgressInterval = 0, 100*time.Millisecond
	cfg.BaseURL, cfg.Egress.AllowPrivateNetworks = f.fakeURL, true // the operator's address: the fake, on loopback
	f.svc = platformsync.NewService(cfg, platformsync.ServiceDeps{Workspaces: s, Connections: s.Partners(keys), CH: f.db.Conn,
		Producer: producer, Topic: kc.Topic(schemas.TopicPlatformRecords), Redis: f.db.Redis, RedisPrefix: f.db.RedisC.KeyPrefix,
		Log: log})
	t.Cleanup(func() { f.release(); f.svc.Close() })

	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: s, Log: log, Sync: &adminapi.SyncAPI{Partners: s.Partners(keys), Syncs: f.svc,
		Runs: syncruns.Store{CH: f.db.Conn, Live: f.db.Redis, Prefix: f.db.RedisC.KeyPrefix}, Audit: s, Log: log}}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	f.fixture = fixture{srv: srv, store: s, admin: admin, rdr: reader}
	return f
}

// hold makes the fake partner API hold every request until release.
func (f *syncFixture) hold() {
	f.holdMu.Lock()
	defer f.holdMu.Unlock()
	f.gate = make(chan struct{})
}

func (f *syncFixture) release() {
	f.holdMu.Lock()
	defer f.holdMu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

// raw calls the API and returns the status and the body as sent.
func (f *syncFixture) raw(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// normalized replaces per-run values (IDs, clocks) so a body can be compared with a golden file.
func normalized(t *testing.T, raw []byte) []byte {
	t.Helper()
	return maskedJSON(t, raw, upperCase("workspaceId", "createdAt", "updatedAt"))
}

func TestPartnerConnectionOverHTTP(t *testing.T) {
	f := setupSync(t)
	const path = "/api/admin/partner-connection"
	if status, body := f.call(t, "GET", path, f.admin, nil); status != 404 || body["error"] != "not_found" {
		t.Fatalf("before connecting: %d %v", status, body)
	}
	if status, body := f.call(t, "PUT", path, f.rdr, map[string]any{"organizationId": "1", "accessToken": "x"}); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("read-scoped key: %d %v", status, body)
	}
	for name, req := range map[string]map[string]any{
		"organization not digits": {"organizationId": "acme", "accessToken": f.token},
		"no token":                {"organizationId": "1234567"},
		"token with a space":      {"organizationId": "1234567", "accessToken": "a b"},
		"partner API address":     {"organizationId": "1234567", "accessToken": f.token, "apiBaseUrl": "https://partners.example"},
		"empty partner address":   {"organizationId": "1234567", "accessToken": f.token, "apiBaseUrl": ""},
	} {
		if status, body := f.call(t, "PUT", path, f.admin, req); status != 400 || body["error"] != "invalid_parameter" || body["message"] == "" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	req := map[string]any{"organizationId": "1234567", "accessToken": f.token}
	status, raw := f.raw(t, "PUT", path, f.admin, req)
	if status != 200 || bytes.Contains(raw, []byte(f.token)) {
		t.Fatalf("PUT: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/partner_connection.json", normalized(t, raw))
	status, raw = f.raw(t, "GET", path, f.admin, nil)
	if status != 200 || bytes.Contains(raw, []byte(f.token)) {
		t.Fatalf("GET: %d %s", status, raw)
	}
	testenv.Golden(t, "testdata/partner_connection.json", normalized(t, raw))

	// Another workspace sees only its own (none).
	other, _, err := f.store.CreateAPIKey(testenv.Ctx(t), "test", "other", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := f.call(t, "GET", path, other, nil); status != 404 {
		t.Errorf("other workspace: %d", status)
	}

	if status, raw := f.raw(t, "DELETE", path, f.admin, nil); status != 204 || len(raw) != 0 {
		t.Fatalf("DELETE: %d %s", status, raw)
	}
	if status, _ := f.call(t, "GET", path, f.admin, nil); status != 404 {
		t.Errorf("after DELETE: %d", status)
	}
	if status, _ := f.call(t, "DELETE", path, f.admin, nil); status != 404 {
		t.Errorf("second DELETE: %d", status)
	}

	status, raw = f.raw(t, "GET", "/api/admin/audit?limit=50", f.admin, nil)
	if status != 200 || bytes.Contains(raw, []byte(f.token)) {
		t.Fatalf("audit: %d %s", status, raw)
	}
	var audit struct {
		Entries []controlplane.AuditEntry `json:"entries"`
	}
	_ = json.Unmarshal(raw, &audit)
	actions := map[string]string{}
	for _, e := range audit.Entries {
		actions[e.Action] = e.Actor
	}
	for _, want := range []string{"partner.connect", "partner.disconnect"} {
		if !strings.HasPrefix(actions[want], "key:") {
			t.Errorf("audit lacks %s by the key (%v)", want, actions)
		}
	}
	if strings.Contains(f.logs.String(), f.token) {
		t.Error("the logs contain the token")
	}
}
