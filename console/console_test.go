package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gin-gonic/gin"
)

func serve(t *testing.T, h gin.HandlerFunc, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.GET("/api/v1/summary", func(c *gin.Context) { c.String(200, "api") })
	e.NoRoute(h)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

var built = fstest.MapFS{
	"index.html":          {Data: []byte("<!doctype html><title>app</title>")},
	"assets/index-ab1.js": {Data: []byte("console.log(1)")},
	".gitkeep":            {Data: nil},
}

// TestServesTheAppWithItsHeaders: `/` and any screen path answer index.html, revalidated; hashed
// assets are cached for a year; every console answer carries the contract's security headers.
func TestServesTheAppWithItsHeaders(t *testing.T) {
	h := Handler(built)
	for _, p := range []string{"/", "/overview", "/customers/cus_1", "/index.html"} {
		w := serve(t, h, http.MethodGet, p)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "<title>app</title>") {
			t.Errorf("GET %s: %d %q, want index.html", p, w.Code, w.Body.String())
		}
		if got := w.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", p, got)
		}
		checkSecurityHeaders(t, p, w)
	}
	w := serve(t, h, http.MethodGet, "/assets/index-ab1.js")
	if w.Code != 200 || w.Body.String() != "console.log(1)" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("asset: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	if got := w.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("asset Cache-Control %q", got)
	}
	checkSecurityHeaders(t, "asset", w)
}

func checkSecurityHeaders(t *testing.T, what string, w *httptest.ResponseRecorder) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	for k, v := range want {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
}

// TestAPIPathsStayJSON: an unknown API path, a missing asset and a write to a console path are
// 404 not_found in the API's error shape, never the app; a real API route is untouched.
func TestAPIPathsStayJSON(t *testing.T) {
	h := Handler(built)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/nope"}, {"GET", "/api/admin/nope"}, {"GET", "/v1/nope"}, {"GET", "/assets/missing.js"},
		{"GET", "/favicon.ico"}, {"POST", "/"}, {"DELETE", "/overview"},
	} {
		w := serve(t, h, c.method, c.path)
		var body struct{ Error, Message string }
		if w.Code != 404 || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error != "not_found" {
			t.Errorf("%s %s: %d %q, want 404 not_found", c.method, c.path, w.Code, w.Body.String())
		}
	}
	if w := serve(t, h, "GET", "/api/v1/summary"); w.Body.String() != "api" {
		t.Errorf("the API route answered %q", w.Body.String())
	}
}

// TestNotBuiltSaysWhatToDo: a binary built before the front end (a fresh clone's `go build`)
// answers `/` with a page that says to run make build.
func TestNotBuiltSaysWhatToDo(t *testing.T) {
	w := serve(t, Handler(fstest.MapFS{".gitkeep": {}}), "GET", "/")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "make build") {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	checkSecurityHeaders(t, "not built", w)
}
