package ingest

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/ingest/tracker"
)

func scriptRouter() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET(routeTrackerJS, serveTrackerJS)
	r.HEAD(routeTrackerJS, serveTrackerJS)
	return r
}

func getScript(r http.Handler, method string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, routeTrackerJS, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec
}

// TestTrackerScriptEncodings: each Accept-Encoding gets the best coding it allows, decoding to the
// same script, with a strong ETag of its own, Vary, long caching, and 304 on its ETag.
func TestTrackerScriptEncodings(t *testing.T) {
	r := scriptRouter()
	decode := map[string]func(io.Reader) (io.Reader, error){
		"br":   func(b io.Reader) (io.Reader, error) { return brotli.NewReader(b), nil },
		"gzip": func(b io.Reader) (io.Reader, error) { return gzip.NewReader(b) },
		"":     func(b io.Reader) (io.Reader, error) { return b, nil },
	}
	etags := map[string]bool{}
	for _, c := range []struct{ accept, want string }{
		{"gzip, deflate, br, zstd", "br"},
		{"br;q=1.0, gzip;q=0.8", "br"},
		{"gzip", "gzip"},
		{"br;q=0, gzip", "gzip"},
		{"*", "br"},
		{"*, br;q=0", "gzip"},
		{"", ""},
		{"identity", ""},
		{"gzip;q=0, br;q=0", ""},
	} {
		rec := getScript(r, http.MethodGet, map[string]string{"Accept-Encoding": c.accept})
		h := rec.Header()
		if rec.Code != 200 || h.Get("Content-Encoding") != c.want {
			t.Fatalf("Accept-Encoding %q: %d, Content-Encoding %q, want %q", c.accept, rec.Code, h.Get("Content-Encoding"), c.want)
		}
		rd, err := decode[c.want](bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(rd); err != nil || !bytes.Equal(got, tracker.Script) {
			t.Fatalf("Accept-Encoding %q: the body does not decode to tracker.Script (%v)", c.accept, err)
		}
		etag := h.Get("ETag")
		if strings.HasPrefix(etag, "W/") || !strings.HasPrefix(etag, `"`) || h.Get("Vary") != "Accept-Encoding" ||
			h.Get("Cache-Control") != scriptCacheControl || !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") ||
			h.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("Accept-Encoding %q: headers %v", c.accept, h)
		}
		etags[c.want+" "+etag] = true
		again := getScript(r, http.MethodGet, map[string]string{"Accept-Encoding": c.accept, "If-None-Match": `"other", ` + etag})
		if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("ETag") != etag {
			t.Fatalf("revalidation with %s: %d, %d bytes", etag, again.Code, again.Body.Len())
		}
	}
	if len(etags) != 3 {
		t.Fatalf("want one ETag per coding, got %v", etags)
	}
	// Another coding's ETag is not this one's: the body is sent.
	br := scriptVariants["br"].etag
	if rec := getScript(r, http.MethodGet, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": br}); rec.Code != 200 {
		t.Fatalf("gzip revalidated with the brotli ETag: %d", rec.Code)
	}
	head := getScript(r, http.MethodHead, map[string]string{"Accept-Encoding": "br"})
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != scriptVariants["br"].length {
		t.Fatalf("HEAD: %d, %d bytes, %v", head.Code, head.Body.Len(), head.Header())
	}
}
