package query_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/uploader"
)

// TestOpenAPIAdsNotConfigured validates the advertising routes of a deployment without an OAuth
// client (the default), which the contract run of `revtrack all` (configured against the fake)
// cannot show: the connection says configured false, and connecting, the callback and the
// conversion-action refresh are refused with 409 not_configured.
func TestOpenAPIAdsNotConfigured(t *testing.T) {
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	s := pipeline.Seed(t, db, "https://app.example").Store
	admin, _, err := s.CreateAPIKey(ctx, "test", "acme", "admin", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := uploader.NewSetup(uploader.SetupDeps{Config: uploader.DefaultConnectConfig(), BaseURL: "http://127.0.0.1:8080",
		Store: s, Keys: keys, Redis: db.Redis, KeyPrefix: db.RedisC.KeyPrefix, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: s, Log: quiet, Ads: &adminapi.AdsAPI{Setup: setup, Rows: uploader.NewRows(db.Conn), Audit: s, Log: quiet,
		Verifier: &adminapi.AdsVerifier{CH: db.Conn, Setup: setup}}}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	doc := loadDoc(t)
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	asJSON := map[string]string{"Accept": "application/json"}
	account := map[string]any{"conversionCustomerId": "1234567890"}
	for _, c := range []call{
		{name: "connection", method: "GET", path: "/api/admin/ads/connection", key: admin, want: 200,
			after: expectBody(`"configured":false`, `"accountDiscovery":false`, `"state":"disconnected"`)},
		{name: "connect", method: "POST", path: "/api/admin/ads/connection", key: admin, want: 409,
			after: expectBody(`"error":"not_configured"`)},
		{name: "callback", method: "GET", path: uploader.OAuthCallbackPath + "?state=s&code=c", header: asJSON, want: 409,
			after: expectBody(`"error":"not_configured"`)},
		{name: "callback page", method: "GET", path: uploader.OAuthCallbackPath + "?state=s&code=c", want: 409,
			after: expectBody("<h1>Not connected</h1>")},
		{name: "refresh actions", method: "POST", path: "/api/admin/ads/conversion-actions/refresh", key: admin, want: 409,
			after: expectBody(`"error":"not_configured"`)},
		{name: "select account", method: "PUT", path: "/api/admin/ads/connection/account", key: admin, want: 409, body: account,
			after: expectBody(`"error":"conflict"`)},
		{name: "conversion actions", method: "GET", path: "/api/admin/ads/conversion-actions", key: admin, want: 409},
		{name: "mappings", method: "GET", path: "/api/admin/ads/mappings", key: admin, want: 200},
		{name: "queue", method: "GET", path: "/api/admin/ads/queue?limit=10", key: admin, want: 200, after: expectBody(`"rows":[]`)},
		{name: "verification", method: "GET", path: "/api/admin/ads/verification", key: admin, want: 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := exchange(t, router, contractEnv{base: srv.URL}, c)
			if c.after != nil {
				c.after(t, body)
			}
		})
	}
}

// exchange sends one call and validates the request and the answer against the description, as
// the contract run does; it returns the answer's body.
func exchange(t *testing.T, router routers.Router, e contractEnv, c call) []byte {
	t.Helper()
	req, reqBody := e.request(t, c, c.path)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not described: %v", c.method, c.path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if !c.invalidRequest {
		if err := openapi3filter.ValidateRequest(testenv.Ctx(t), in); err != nil {
			t.Fatalf("the test's request does not match the description: %v", err)
		}
		if reqBody != nil {
			req.Body = io.NopCloser(bytes.NewReader(reqBody))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != c.want {
		t.Fatalf("%s %s: status %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
	}
	err = openapi3filter.ValidateResponse(testenv.Ctx(t), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		t.Fatalf("%s %s answered %d with a body or headers the description does not allow:\n%v\nbody: %s",
			c.method, c.path, resp.StatusCode, err, body)
	}
	return body
}
