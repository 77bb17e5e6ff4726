package httpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestUnroutedAnswersTheErrorContract(t *testing.T) {
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	Unrouted(engine)
	engine.GET("/api/v1/summary", func(c *gin.Context) { c.Status(http.StatusOK) })
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/v1/metrics/", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/nowhere", http.StatusNotFound, "not_found"},
		{http.MethodPost, "/api/v1/summary", http.StatusMethodNotAllowed, "method_not_allowed"},
	} {
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		var body struct{ Error, Message string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON: %v", c.method, c.path, w.Code, w.Body, err)
		}
		if w.Code != c.status || body.Error != c.code || body.Message == "" {
			t.Errorf("%s %s: %d %+v, want %d %s", c.method, c.path, w.Code, body, c.status, c.code)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s %s: Cache-Control %q", c.method, c.path, cc)
		}
	}
}
