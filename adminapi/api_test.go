package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/internal/testenv"
)

type fixture struct {
	srv        *httptest.Server
	store      *controlplane.Store
	admin, rdr string
}

func setup(t *testing.T) fixture {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	s := controlplane.NewStore(db.Conn, db.Redis, db.RedisC.KeyPrefix)
	for _, slug := range []string{"acme", "other"} {
		if _, err := s.CreateWorkspace(ctx, "test", slug, slug, controlplane.StatusActive); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutApp(ctx, "test", controlplane.App{ID: "app-1", Name: "App"}); err != nil {
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
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: s, Log: pipeline.Quiet}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return fixture{srv: srv, store: s, admin: admin, rdr: reader}
}

func (f fixture) call(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s %s: responses must not be cached", method, path)
	}
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestAuthAndScope(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		key    string
		status int
		code   string
	}{
		{"", 401, "unauthorized"},
		{"revtrack_sk_nope", 401, "unauthorized"},
		{"tracker_sk_nope", 401, "unauthorized"},
		{f.rdr, 403, "forbidden"},
	} {
		status, body := f.call(t, "GET", "/api/admin/sources", tc.key, nil)
		if status != tc.status || body["error"] != tc.code || body["message"] == "" {
			t.Errorf("key %.14q: %d %v", tc.key, status, body)
		}
	}
	if status, _ := f.call(t, "GET", "/api/admin/sources", f.admin, nil); status != 200 {
		t.Fatalf("admin key: %d", status)
	}
	if _, err := f.store.SetSubscriptionStatus(testenv.Ctx(t), "test", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	if status, body := f.call(t, "GET", "/api/admin/sources", f.admin, nil); status != 403 || body["error"] != "subscription_inactive" {
		t.Fatalf("inactive subscription: %d %v", status, body)
	}
}

func TestSourceLifecycleOverHTTP(t *testing.T) {
	f := setup(t)
	status, body := f.call(t, "POST", "/api/admin/sources", f.admin, map[string]any{"appId": "app-1", "name": "Site",
		"allowedOrigins": []string{"https://app.example", "http://localhost:3000"}})
	if status != 201 || !strings.HasPrefix(body["privateKey"].(string), "tracker_sk_") {
		t.Fatalf("create: %d %v", status, body)
	}
	src := body["source"].(map[string]any)
	id, pk := src["id"].(string), src["publicKey"].(string)
	if _, leaked := src["privateKeyHash"]; leaked {
		t.Fatal("the private key's hash is exposed")
	}

	for name, req := range map[string]map[string]any{
		"plain http origin": {"appId": "app-1", "allowedOrigins": []string{"http://app.example"}},
		"no origins":        {"appId": "app-1", "allowedOrigins": []string{}},
		"unselected app":    {"appId": "app-9", "allowedOrigins": []string{"https://app.example"}},
		"missing app":       {"allowedOrigins": []string{"https://app.example"}},
	} {
		if status, body := f.call(t, "POST", "/api/admin/sources", f.admin, req); status != 400 || body["error"] != "invalid_parameter" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	status, body = f.call(t, "PATCH", "/api/admin/sources/"+id, f.admin, map[string]any{"enabled": false})
	if status != 200 || body["source"].(map[string]any)["enabled"] != false {
		t.Fatalf("disable: %d %v", status, body)
	}
	status, body = f.call(t, "POST", "/api/admin/sources/"+id+"/rotate-public-key", f.admin, nil)
	if status != 200 || body["source"].(map[string]any)["publicKey"] == pk {
		t.Fatalf("rotate public key: %d %v", status, body)
	}
	if _, err := f.store.SourceByPublicKey(testenv.Ctx(t), pk); err == nil {
		t.Fatal("old public key still resolves")
	}
	status, body = f.call(t, "POST", "/api/admin/sources/"+id+"/rotate-private-key", f.admin, nil)
	if status != 200 || !strings.HasPrefix(body["privateKey"].(string), "tracker_sk_") {
		t.Fatalf("rotate private key: %d %v", status, body)
	}

	// Another workspace's admin cannot see or touch the source.
	other, _, err := f.store.CreateAPIKey(testenv.Ctx(t), "test", "other", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := f.call(t, "GET", "/api/admin/sources/"+id, other, nil); status != 404 {
		t.Fatalf("other workspace: %d", status)
	}
	if status, _ := f.call(t, "PATCH", "/api/admin/sources/"+id, other, map[string]any{"enabled": true}); status != 404 {
		t.Fatalf("other workspace patch: %d", status)
	}

	status, body = f.call(t, "GET", "/api/admin/audit?limit=20", f.admin, nil)
	if status != 200 {
		t.Fatalf("audit: %d %v", status, body)
	}
	actions := map[string]bool{}
	for _, e := range body["entries"].([]any) {
		m := e.(map[string]any)
		actions[m["action"].(string)] = true
		if !strings.HasPrefix(m["actor"].(string), "key:") && !strings.HasPrefix(m["actor"].(string), "test") {
			t.Errorf("actor %v", m["actor"])
		}
	}
	for _, want := range []string{"tracking_source.create", "tracking_source.disable", "tracking_source.rotate_public_key", "tracking_source.rotate_private_key"} {
		if !actions[want] {
			t.Errorf("audit lacks %s", want)
		}
	}
	if status, _ := f.call(t, "GET", "/api/admin/audit?limit=0", f.admin, nil); status != 400 {
		t.Errorf("bad limit: %d", status)
	}
}

func TestKeysOverHTTP(t *testing.T) {
	f := setup(t)
	status, body := f.call(t, "POST", "/api/admin/keys", f.admin, map[string]any{"name": "mcp"})
	if status != 201 || !strings.HasPrefix(body["value"].(string), controlplane.APIKeyPrefix) || body["key"].(map[string]any)["scope"] != "read" {
		t.Fatalf("create: %d %v", status, body)
	}
	if status, _ := f.call(t, "POST", "/api/admin/keys", f.admin, map[string]any{"name": "x", "scope": "root"}); status != 400 {
		t.Fatalf("bad scope: %d", status)
	}
	status, body = f.call(t, "GET", "/api/admin/keys", f.admin, nil)
	if status != 200 || len(body["keys"].([]any)) != 3 {
		t.Fatalf("list: %d %v", status, body)
	}
	var adminID string
	for _, k := range body["keys"].([]any) {
		if m := k.(map[string]any); m["name"] == "ops" {
			adminID = m["id"].(string)
		}
	}
	if status, _ := f.call(t, "POST", "/api/admin/keys/"+adminID+"/revoke", f.admin, nil); status != 200 {
		t.Fatalf("revoke: %d", status)
	}
	if status, _ := f.call(t, "GET", "/api/admin/keys", f.admin, nil); status != 401 {
		t.Fatalf("revoked key still works: %d", status)
	}
}

// TestRefusalsAreOneLineOfTheList: the admin API's refusals carry a code of the API's list with its
// status and a one-line message, including those built from several errors (a body missing two
// required members draws two validation errors).
func TestRefusalsAreOneLineOfTheList(t *testing.T) {
	f := setup(t)
	for _, c := range []struct {
		method, path, key string
		body              any
		code              string
	}{
		{"POST", "/api/admin/sources", f.admin, map[string]any{}, "invalid_parameter"},
		{"POST", "/api/admin/sources", f.admin, "not an object", "invalid_body"},
		{"POST", "/api/admin/sources", f.admin, map[string]any{"appId": "app-9", "allowedOrigins": []string{"https://a.example"}}, "invalid_parameter"},
		{"POST", "/api/admin/keys", f.admin, map[string]any{"scope": "owner"}, "invalid_parameter"},
		{"GET", "/api/admin/audit?limit=0", f.admin, nil, "invalid_parameter"},
		{"GET", "/api/admin/customer-exclusions?lifted=maybe", f.admin, nil, "invalid_parameter"},
		{"DELETE", "/api/admin/customer-exclusions", f.admin, nil, "invalid_parameter"},
		{"GET", "/api/admin/sources/nope", f.admin, nil, "not_found"},
		{"GET", "/api/admin/sources", f.rdr, nil, "forbidden"},
		{"GET", "/api/admin/sources", "revtrack_sk_nope", nil, "unauthorized"},
		{"GET", "/api/admin/analyst-access", f.admin, nil, "not_configured"},
	} {
		status, body := f.call(t, c.method, c.path, c.key, c.body)
		msg, _ := body["message"].(string)
		e, listed := apierror.Lookup(c.code)
		if body["error"] != c.code || !listed || status != e.Status || msg == "" || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s %s %v: %d %q, want %s on one line", c.method, c.path, c.body, status, body, c.code)
		}
	}
}
