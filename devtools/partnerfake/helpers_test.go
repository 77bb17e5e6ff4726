package partnerfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

var testEnd = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// testConfig is small but turns every feature up so each transaction and event type occurs.
func testConfig() GenConfig {
	c := DemoConfig(testEnd)
	c.Seed = 7
	c.Shops = 300
	c.Start = testEnd.AddDate(0, -14, 0)
	c.TestShopRate, c.ExcludedRate = 0.05, 0.05
	c.FreezeRate, c.PlanChangeRate, c.RefundRate = 0.05, 0.05, 0.05
	c.CreditRate, c.OneTimeRate, c.DeclineRate = 0.25, 0.25, 0.15
	c.ChurnRate, c.ReactivationRate, c.SharedDomainRate = 0.08, 0.4, 0.3
	c.UsageRecordsMean = 4
	c.RevenueShareThresholdUSD = 15_000
	return c
}

var (
	testDataOnce sync.Once
	testData     *Dataset
)

// testDataset is generated once and shared read-only by the tests.
func testDataset() *Dataset {
	testDataOnce.Do(func() { testData = Generate(testConfig()) })
	return testData
}

const testToken = "prtapi_fake_partner_token"

// newTestServer serves the shared dataset without rate limiting unless mod sets it.
func newTestServer(mod func(*ServerConfig)) *Server {
	cfg := DefaultServerConfig()
	cfg.RequestsPerSecond = 0
	if mod != nil {
		mod(&cfg)
	}
	return NewServer(testDataset(), cfg)
}

type response struct {
	status int
	header http.Header
	raw    []byte
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// post sends one GraphQL request through the handler.
func post(t *testing.T, s *Server, version, query string, vars map[string]any) *response {
	t.Helper()
	return postAs(t, s, s.Path(version), testToken, map[string]any{"query": query, "variables": vars})
}

func postAs(t *testing.T, s *Server, path, token string, body any) *response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Shopify-Access-Token", token)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	r := &response{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	if err := json.Unmarshal(r.raw, r); err != nil && r.raw[0] == '{' {
		t.Fatalf("response is not JSON: %v\n%s", err, r.raw)
	}
	return r
}

// dig walks a decoded JSON value by keys and indices.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
