package health

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func serve(r *Readiness, path string) (int, Report) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	r.Register(e)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	var rep Report
	_ = json.Unmarshal(w.Body.Bytes(), &rep)
	if w.Header().Get("Cache-Control") != "no-store" {
		panic("health responses must not be cached")
	}
	return w.Code, rep
}

func TestReadyWhenEveryCheckPasses(t *testing.T) {
	r := NewReadiness()
	r.Add("kafka", CheckFunc(func(context.Context) error { return nil }))
	r.Add("redis", CheckFunc(func(context.Context) error { return nil }))
	code, rep := serve(r, "/readyz")
	if code != 200 || rep.Status != "ready" || rep.Checks["kafka"].Status != "up" {
		t.Fatalf("%d %+v", code, rep)
	}
}

func TestUnavailableNamesTheFailingDependency(t *testing.T) {
	r := NewReadiness()
	r.Timeout = 50 * time.Millisecond
	r.Add("kafka", CheckFunc(func(context.Context) error { return nil }))
	r.Add("redis", CheckFunc(func(context.Context) error { return errors.New("connection refused") }))
	r.Add("clickhouse", CheckFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }))
	start := time.Now()
	code, rep := serve(r, "/readyz")
	if code != http.StatusServiceUnavailable || rep.Status != "unavailable" {
		t.Fatalf("%d %+v", code, rep)
	}
	if rep.Checks["redis"].Error != "connection refused" || rep.Checks["clickhouse"].Status != "down" || rep.Checks["kafka"].Status != "up" {
		t.Fatalf("%+v", rep.Checks)
	}
	if time.Since(start) > time.Second {
		t.Fatal("a hanging check was not bounded by the timeout")
	}
}

func TestLivenessIgnoresDependencies(t *testing.T) {
	r := NewReadiness()
	r.Add("redis", CheckFunc(func(context.Context) error { return errors.New("down") }))
	if code, _ := serve(r, "/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
}
