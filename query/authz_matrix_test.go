package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// The authorization matrix: every operation the OpenAPI document describes with bearer security,
// plus MCP, is called by every kind of caller, and each answer must be the one the caller's rights
// allow (docs/SECURITY.md). The operations come from the document, so a route is covered the day it
// is described; operations without security must be in publicOperations, deliberately.

// principal is one kind of caller.
type principal string

const (
	pNone        principal = "no key"
	pRevoked     principal = "revoked key"
	pOtherAdmin  principal = "another workspace's admin key"
	pRead        principal = "read key"
	pPrivate     principal = "tracking private key"
	pDisabledSrc principal = "disabled source's key"
	pLapsed      principal = "canceled subscription's key"
	pAdmin       principal = "admin key" // last: its calls change state
)

var principals = []principal{pNone, pRevoked, pOtherAdmin, pRead, pPrivate, pDisabledSrc, pLapsed, pAdmin}

// publicOperations need no bearer key: their own checks (public key and origin, OAuth state and
// browser cookie) are tested with their routes.
var publicOperations = []string{
	"GET /api/admin/ads/oauth/begin",
	"GET /api/admin/ads/oauth/callback",
	"GET /api/v1/openapi.json",
	"GET /v1/tracker.js",
	"HEAD /v1/tracker.js",
	"OPTIONS /v1/collect",
	"POST /api/admin/ads/oauth/confirm",
	"POST /api/admin/invitations/accept",
	"POST /api/admin/password-resets/complete",
	"POST /api/admin/session",
	"POST /v1/collect",
}

// sessionOperations take a console session only, never a key (a person's own session and
// account): adminapi's TestCSRF, TestRevocation and TestSignIn hold them to their rules, and
// TestRoleMatrix holds every workspace route to the roles.
var sessionOperations = []string{
	"DELETE /api/admin/session",
	"GET /api/admin/session",
	"PUT /api/admin/account",
	"PUT /api/admin/account/password",
}

// matrixEnv is acme (the target) and other (the attacker's own workspace), on one `revtrack all`.
type matrixEnv struct {
	base string
	keys map[principal]string
	// ids of acme's objects that path parameters name; their presence in another workspace's answer
	// is a leak.
	acmeWorkspaceID, sourceID, keyID string
	publicKey                        string
}

func startMatrixEnv(t *testing.T) matrixEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	s := tenant.Store
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	e := matrixEnv{keys: map[principal]string{pPrivate: tenant.PrivateKey}, acmeWorkspaceID: tenant.Source.WorkspaceID,
		publicKey: tenant.Source.PublicKey}
	var err error
	e.keys[pRead], _, err = s.CreateAPIKey(ctx, "test", "acme", "reporting", controlplane.ScopeRead)
	must(err)
	e.keys[pAdmin], _, err = s.CreateAPIKey(ctx, "test", "acme", "admin", controlplane.ScopeAdmin)
	must(err)
	revoked, rk, err := s.CreateAPIKey(ctx, "test", "acme", "old", controlplane.ScopeAdmin)
	must(err)
	_, err = s.RevokeAPIKey(ctx, "test", rk.ID)
	must(err)
	e.keys[pRevoked] = revoked
	// The objects path parameters name: a source and a key of acme that the admin's calls may rotate,
	// disable or revoke without touching the other principals' keys.
	victim, _, err := s.CreateSource(ctx, "test", "acme", "app-1", "victim", []string{"https://victim.example"})
	must(err)
	e.sourceID = victim.ID
	_, vk, err := s.CreateAPIKey(ctx, "test", "acme", "victim", controlplane.ScopeRead)
	must(err)
	e.keyID = vk.ID
	disabled, disabledSK, err := s.CreateSource(ctx, "test", "acme", "app-1", "disabled", []string{"https://app.example"})
	must(err)
	_, err = s.SetSourceEnabled(ctx, "test", disabled.WorkspaceID, disabled.ID, false)
	must(err)
	e.keys[pDisabledSrc] = disabledSK

	for _, ws := range []struct{ slug, status string }{{"other", controlplane.StatusActive}, {"lapsed", controlplane.StatusActive}} {
		_, err = s.CreateWorkspace(ctx, "test", ws.slug, ws.slug, ws.status)
		must(err)
		_, err = s.SetSelectedApps(ctx, "test", ws.slug, []string{"app-1"})
		must(err)
	}
	e.keys[pOtherAdmin], _, err = s.CreateAPIKey(ctx, "test", "other", "attacker", controlplane.ScopeAdmin)
	must(err)
	e.keys[pLapsed], _, err = s.CreateAPIKey(ctx, "test", "lapsed", "admin", controlplane.ScopeAdmin)
	must(err)
	_, err = s.SetSubscriptionStatus(ctx, "test", "lapsed", controlplane.StatusCanceled)
	must(err)

	ads := startAdsContract(t, db, tenant)
	app := runapp.Start(t, testenv.KafkaConfig(t), db.CH, db.RedisC, ads.flags()...)
	e.base = app.URL()
	return e
}

// operation is one described operation.
type operation struct {
	method, path string // path as described, {params} included
}

func (o operation) String() string { return o.method + " " + o.path }

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// concrete fills the path parameters with acme's objects (or well-formed IDs that exist nowhere).
func (e matrixEnv) concrete(o operation) string {
	return pathParam.ReplaceAllStringFunc(o.path, func(p string) string {
		switch {
		case p == "{metric}":
			return "mrr"
		case strings.HasPrefix(o.path, "/api/admin/sources/") || strings.HasPrefix(o.path, "/api/v1/tracking/sources/"):
			return e.sourceID
		case strings.HasPrefix(o.path, "/api/admin/keys/"):
			return e.keyID
		default:
			return "00000000-0000-4000-8000-000000000000"
		}
	})
}

// namesAcmeObject: the path names one of acme's own objects (not a made-up ID).
func (e matrixEnv) namesAcmeObject(o operation) bool {
	p := e.concrete(o)
	return strings.Contains(p, e.sourceID) || strings.Contains(p, e.keyID)
}

func (e matrixEnv) body(o operation) []byte {
	switch {
	case o.method == http.MethodGet || o.method == http.MethodDelete:
		return nil
	case o.path == "/api/tracking/server-events":
		b, _ := json.Marshal(map[string]any{"teamSlug": "acme", "publicKey": e.publicKey, "eventId": "matrix-" + testenv.ID(),
			"name": "install", "customerRef": "matrix.example", "occurredAt": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)})
		return b
	case o.path == "/api/mcp":
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`)
	default:
		return []byte(`{}`)
	}
}

// verdict checks one answer; "" means it is the expected one.
func (e matrixEnv) verdict(p principal, o operation, status int, body []byte) string {
	admin := strings.HasPrefix(o.path, "/api/admin/")
	rest := strings.HasPrefix(o.path, "/api/v1/")
	mcp := o.path == "/api/mcp"
	authz := status == http.StatusUnauthorized || status == http.StatusForbidden
	want := func(ok bool, what string) string {
		if ok {
			return ""
		}
		return fmt.Sprintf("want %s, got %d %s", what, status, clip(body))
	}
	switch p {
	case pNone, pRevoked, pDisabledSrc:
		return want(status == http.StatusUnauthorized, "401")
	case pLapsed:
		if o.path == "/api/tracking/server-events" {
			// The body names acme's source, which the lapsed workspace's key does not belong to.
			return want(status == http.StatusUnauthorized, "401 (not this key's source)")
		}
		return want(status == http.StatusForbidden, "403 (subscription)")
	case pRead:
		if admin {
			return want(status == http.StatusForbidden, "403 (admin scope)")
		}
		return want(!authz, "not 401/403")
	case pPrivate:
		if admin || rest {
			return want(status == http.StatusForbidden, "403 (source keys read through MCP)")
		}
		return want(!authz, "not 401/403")
	case pOtherAdmin:
		if e.namesAcmeObject(o) && o.path != "/api/tracking/server-events" {
			return want(status == http.StatusNotFound, "404 (another workspace's object)")
		}
		if o.path == "/api/tracking/server-events" {
			// acme's public key with another workspace's key: no source of the caller's.
			return want(status == http.StatusUnauthorized || status == http.StatusForbidden, "401/403")
		}
		for _, id := range []string{e.acmeWorkspaceID, e.sourceID, e.keyID, e.publicKey} {
			if bytes.Contains(body, []byte(id)) {
				return fmt.Sprintf("the answer names acme's %q: %s", id, clip(body))
			}
		}
		return want(!authz || mcp && status == http.StatusOK, "its own workspace's answer")
	case pAdmin:
		return want(!authz, "not 401/403")
	}
	return "unknown principal"
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func TestAuthorizationMatrix(t *testing.T) {
	doc := loadDoc(t)
	var ops []operation
	var public, session []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := operation{method: method, path: path}
			switch {
			case op.Security != nil && len(*op.Security) == 0:
				public = append(public, o.String())
			case op.Security != nil && (*op.Security)[0]["bearerAuth"] == nil:
				session = append(session, o.String())
			default:
				ops = append(ops, o)
			}
		}
	}
	sort.Strings(public)
	sort.Strings(session)
	if strings.Join(public, "\n") != strings.Join(publicOperations, "\n") {
		t.Fatalf("operations without bearer security changed; review them and update publicOperations:\n%s", strings.Join(public, "\n"))
	}
	if strings.Join(session, "\n") != strings.Join(sessionOperations, "\n") {
		t.Fatalf("operations for console sessions only changed; review them and update sessionOperations:\n%s", strings.Join(session, "\n"))
	}
	ops = append(ops, operation{method: http.MethodPost, path: "/api/mcp"})
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })

	e := startMatrixEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var table strings.Builder
	for _, p := range principals {
		for _, o := range ops {
			var rd io.Reader
			if b := e.body(o); b != nil {
				rd = bytes.NewReader(b)
			}
			req, err := http.NewRequest(o.method, e.base+e.concrete(o), rd)
			if err != nil {
				t.Fatal(err)
			}
			if rd != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			if o.path == "/api/mcp" {
				req.Header.Set("Accept", "application/json, text/event-stream")
			}
			if k := e.keys[p]; k != "" {
				req.Header.Set("Authorization", "Bearer "+k)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s as %s: %v", o, p, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(&table, "%-55s %-32s %d\n", o, p, resp.StatusCode)
			if v := e.verdict(p, o, resp.StatusCode, body); v != "" {
				t.Errorf("%s as %s: %s", o, p, v)
			}
			if resp.StatusCode >= 500 {
				t.Errorf("%s as %s: %d %s", o, p, resp.StatusCode, clip(body))
			}
		}
	}
	if t.Failed() {
		t.Logf("matrix:\n%s", table.String())
	}
}
