package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
)

// peopleEnv is the admin API and the reporting edge with console sign-in on the test stack:
// workspaces acme and other, an owner, an admin and a member of acme, and multi (member of acme,
// owner of other). The sessions' clock is env.clock, which a test moves.
type peopleEnv struct {
	srv      *httptest.Server
	store    *controlplane.Store
	sessions *authn.Sessions
	adminKey string
	ws       map[string]controlplane.Workspace

	mu  sync.Mutex
	now time.Time
}

const (
	ownerEmail  = "owner@acme.test"
	adminEmail  = "admin@acme.test"
	memberEmail = "member@acme.test"
	multiEmail  = "multi@acme.test"
)

// password is each fixture user's password.
func password(email string) string { return "pw-of-" + email }

func setupPeople(t *testing.T, tune func(*authn.SessionConfig)) *peopleEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	s := controlplane.NewStore(db.Conn, db.Redis, db.RedisC.KeyPrefix)
	env := &peopleEnv{store: s, ws: map[string]controlplane.Workspace{}, now: time.Now()}
	for _, slug := range []string{"acme", "other"} {
		w, err := s.CreateWorkspace(ctx, "test", slug, strings.ToUpper(slug), controlplane.StatusActive)
		if err != nil {
			t.Fatal(err)
		}
		env.ws[slug] = w
	}
	for _, u := range []struct{ slug, email, role string }{
		{"acme", ownerEmail, controlplane.RoleOwner}, {"acme", adminEmail, controlplane.RoleAdmin},
		{"acme", memberEmail, controlplane.RoleMember}, {"acme", multiEmail, controlplane.RoleMember},
		{"other", multiEmail, controlplane.RoleOwner},
	} {
		if _, err := s.CreateUser(ctx, "test", u.slug, u.email, "Name of "+u.email, u.role, password(u.email)); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if env.adminKey, _, err = s.CreateAPIKey(ctx, "test", "acme", "ops", controlplane.ScopeAdmin); err != nil {
		t.Fatal(err)
	}
	cfg := authn.DefaultSessionConfig()
	if tune != nil {
		tune(&cfg)
	}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	// The role matrix reaches handlers whose dependencies this fixture leaves out: they panic, and
	// a 500 is "let through", which is what the matrix asks.
	e.Use(gin.RecoveryWithWriter(io.Discard))
	env.srv = httptest.NewServer(e)
	t.Cleanup(env.srv.Close)
	if env.sessions, err = authn.NewSessions(db.Redis, db.RedisC.KeyPrefix, cfg, env.srv.URL); err != nil {
		t.Fatal(err)
	}
	env.sessions.Now = env.clock
	auth := &authn.Console{Sessions: env.sessions, Users: s}
	(&adminapi.API{Store: s, People: s, Log: pipeline.Quiet, Sync: &adminapi.SyncAPI{},
		Ads:     &adminapi.AdsAPI{Verifier: &adminapi.AdsVerifier{}, Log: pipeline.Quiet},
		Console: &adminapi.Console{Auth: auth, Throttle: authn.NewThrottle(db.Redis, db.RedisC.KeyPrefix, cfg), BaseURL: env.srv.URL},
	}).Register(e)
	(&query.API{Keys: s, Console: auth, Sources: s, Log: pipeline.Quiet}).Register(e)
	return env
}

func (e *peopleEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *peopleEnv) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// request sends one request; headers are name, value pairs.
func (e *peopleEnv) request(t *testing.T, method, path string, body any, headers ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// signedIn is one signed-in browser: its cookie, CSRF token and chosen workspace.
type signedIn struct {
	env          *peopleEnv
	cookie, csrf string
	workspace    string
	body         map[string]any
}

// signIn signs email in with its fixture password and fails the test unless it works.
func (e *peopleEnv) signIn(t *testing.T, email string) *signedIn {
	t.Helper()
	return e.signInWith(t, email, password(email))
}

func (e *peopleEnv) signInWith(t *testing.T, email, pw string) *signedIn {
	t.Helper()
	resp, b := e.request(t, "POST", "/api/admin/session", map[string]string{"email": email, "password": pw}, "Origin", e.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in of %s: %d %s", email, resp.StatusCode, b)
	}
	return e.browserFrom(t, resp, b)
}

func (e *peopleEnv) browserFrom(t *testing.T, resp *http.Response, b []byte) *signedIn {
	t.Helper()
	br := &signedIn{env: e}
	for _, c := range resp.Cookies() {
		if c.Name == authn.CookieName {
			br.cookie = c.Value
		}
	}
	if err := json.Unmarshal(b, &br.body); err != nil {
		t.Fatal(err)
	}
	br.csrf, _ = br.body["csrfToken"].(string)
	if br.cookie == "" || br.csrf == "" {
		t.Fatalf("no session cookie or csrfToken: %s", b)
	}
	return br
}

// do sends a request as the signedIn would: its cookie, the console's Origin and the CSRF token
// on a state-changing request, the workspace header; extra headers override them ("" drops one).
func (b *signedIn) do(t *testing.T, method, path string, body any, headers ...string) (int, map[string]any, *http.Response) {
	t.Helper()
	h := []string{"Cookie", authn.CookieName + "=" + b.cookie}
	if method != "GET" && method != "HEAD" {
		h = append(h, "Origin", b.env.srv.URL, authn.CSRFHeader, b.csrf)
	}
	if b.workspace != "" {
		h = append(h, authn.WorkspaceHeader, b.workspace)
	}
	resp, raw := b.env.request(t, method, path, body, append(h, headers...)...)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp
}

// refusal is the error code and message of a refused request.
func refusal(body map[string]any) (string, string) {
	code, _ := body["error"].(string)
	msg, _ := body["message"].(string)
	return code, msg
}
