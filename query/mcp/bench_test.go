package mcp_test

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	querymcp "github.com/revtrack/revtrack/query/mcp"
)

// BenchmarkSummaryMCPvsREST times get_summary over MCP (mcp-go's client, one connection) beside
// GET /api/v1/summary (one keep-alive HTTP client), alternating the two in one loop so that both see
// the same machine load, and reports each one's p50 and p99 and the p50 ratio (target ≤ 1.2).
//
//	go test -run '^$' -bench SummaryMCPvsREST -benchtime 300x ./query/mcp/
func BenchmarkSummaryMCPvsREST(b *testing.B) {
	st := startStack(b)
	caller, err := querymcp.Dial(b.Context(), st.base, st.apiKey, "2025-11-25")
	if err != nil {
		b.Fatal(err)
	}
	defer caller.Close()
	httpc := &http.Client{}
	rest := func() {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodGet, st.base+"/api/v1/summary", nil)
		req.Header.Set("Authorization", "Bearer "+st.apiKey)
		resp, err := httpc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("REST summary: %d", resp.StatusCode)
		}
	}
	mcp := func() {
		if _, err := caller.Call(b.Context(), "get_summary", map[string]any{}); err != nil {
			b.Fatal(err)
		}
	}
	for range 10 { // warm caches and connections
		rest()
		mcp()
	}
	var restT, mcpT []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rest()
		t1 := time.Now()
		mcp()
		restT, mcpT = append(restT, t1.Sub(t0)), append(mcpT, time.Since(t1))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(restT, 0.5), "rest-p50-ms")
	b.ReportMetric(pct(restT, 0.99), "rest-p99-ms")
	b.ReportMetric(pct(mcpT, 0.5), "mcp-p50-ms")
	b.ReportMetric(pct(mcpT, 0.99), "mcp-p99-ms")
	b.ReportMetric(pct(mcpT, 0.5)/pct(restT, 0.5), "mcp/rest-p50")
	b.ReportMetric(0, "ns/op")
}
