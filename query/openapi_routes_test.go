package query_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/openapi"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// documentedPrefixes are the parts of the URL space the description owns. Everything else on the
// engine (/healthz, /readyz, /metrics) is operations, not API.
var documentedPrefixes = []string{"/api/", "/v1/"}

// undocumented are routes under those prefixes that are deliberately not REST resources.
var undocumented = map[string]string{
	"/api/mcp": "the MCP endpoint speaks JSON-RPC over Streamable HTTP; its tools describe themselves",
}

// routeKey is "METHOD /path" with every path parameter written {}, so that gin's :id and the
// description's {id} compare equal whatever the parameter is called.
func routeKey(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") || (strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")) {
			segs[i] = "{}"
		}
	}
	return strings.ToUpper(method) + " " + strings.Join(segs, "/")
}

// registeredRoutes are the routes the query API, the ingest edge and the admin API register, as
// `revtrack all` mounts them on one engine (cmd/revtrack/cli/serve.go), limited to the documented
// prefixes. A new component that serves HTTP under them is added here.
func registeredRoutes(t testing.TB) map[string]bool {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&query.API{Log: quiet}).Register(e)
	ingest.New(ingest.DefaultConfig(), ingest.Deps{Log: quiet}).Register(e)
	// Typed so that the optional admin routes (customer exclusions, partner connection, sync runs,
	// the advertising setup with its verification and the key-less OAuth callback) are mounted as
	// `revtrack all` mounts them; registering calls nothing on them.
	(&adminapi.API{Store: (*controlplane.Store)(nil), Sync: &adminapi.SyncAPI{},
		Ads: &adminapi.AdsAPI{Verifier: &adminapi.AdsVerifier{}, Log: quiet}, Log: quiet}).Register(e)
	out := map[string]bool{}
	for _, r := range e.Routes() {
		if !slices.ContainsFunc(documentedPrefixes, func(p string) bool { return strings.HasPrefix(r.Path, p) }) {
			continue
		}
		if _, ok := undocumented[strings.TrimSuffix(r.Path, "/")]; ok {
			continue
		}
		out[routeKey(r.Method, r.Path)] = true
	}
	return out
}

// documentedRoutes are the operations of the description.
func documentedRoutes(t testing.TB, doc *openapi3.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out[routeKey(method, path)] = true
		}
	}
	return out
}

func loadDoc(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(testenv.Ctx(t)); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI 3 description: %v", err)
	}
	return doc
}

// TestOpenAPIDescribesEveryRoute: every route the engines register under the documented prefixes is
// in the description, and every described operation is registered.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	doc := loadDoc(t)
	registered, documented := registeredRoutes(t), documentedRoutes(t, doc)
	for _, k := range sortedKeys(registered) {
		if !documented[k] {
			t.Errorf("route %s is registered but not described in query/openapi/openapi.yaml", k)
		}
	}
	for _, k := range sortedKeys(documented) {
		if !registered[k] {
			t.Errorf("route %s is described in query/openapi/openapi.yaml but no handler is registered", k)
		}
	}
}

// TestOpenAPIServedWithoutKey: the description is served, as JSON, without a key.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&query.API{Log: quiet}).Register(e)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, openapi.Path, nil)
	e.ServeHTTP(rec, req)
	want, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusOK || rec.Body.String() != string(want) {
		t.Fatalf("GET %s: %d, body matches: %v", openapi.Path, rec.Code, rec.Body.String() == string(want))
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	etag := rec.Header().Get("ETag")
	rec = httptest.NewRecorder()
	req.Header.Set("If-None-Match", etag)
	e.ServeHTTP(rec, req)
	if etag == "" || rec.Code != http.StatusNotModified {
		t.Errorf("revalidation with ETag %q: %d, want 304", etag, rec.Code)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
