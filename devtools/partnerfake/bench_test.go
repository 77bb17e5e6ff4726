package partnerfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

var benchEnd = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkGenerate measures generation at benchmark scale (43,400 shops, about 5 million
// transactions, 3 currencies). Run it by hand:
//
//	go test ./devtools/partnerfake -run XXX -bench 'Generate$' -benchmem -benchtime 1x
//
// It reports the data volume and the live heap the dataset keeps after a GC.
func BenchmarkGenerate(b *testing.B) {
	benchmarkGenerate(b, BenchConfig(benchEnd))
}

// BenchmarkGenerateDemo measures the `make run` size.
func BenchmarkGenerateDemo(b *testing.B) {
	benchmarkGenerate(b, DemoConfig(benchEnd))
}

func benchmarkGenerate(b *testing.B, cfg GenConfig) {
	var d *Dataset
	for b.Loop() {
		d = Generate(cfg)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(d.NumCustomers()), "customers")
	b.ReportMetric(float64(d.NumTransactions()), "transactions")
	b.ReportMetric(float64(d.NumEvents()), "events")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
	runtime.KeepAlive(d)
}

// BenchmarkServeTransactionsPage measures one 100-transaction page of the demo data set through
// the HTTP handler (parse, validate, execute, encode).
func BenchmarkServeTransactionsPage(b *testing.B) {
	d := Generate(DemoConfig(benchEnd))
	cfg := DefaultServerConfig()
	cfg.RequestsPerSecond = 0
	h := NewServer(d, cfg)
	body, _ := json.Marshal(map[string]any{"query": transactionsQuery, "variables": map[string]any{"first": 100, "appId": d.Apps[0].ID}})
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, h.Path("2025-07"), bytes.NewReader(body))
		req.Header.Set("X-Shopify-Access-Token", cfg.Tokens[0])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// transactionsQuery is the shape a connector sends: every app transaction field, by fragment.
const transactionsQuery = `query Transactions($first: Int!, $after: String, $appId: ID, $createdAtMin: DateTime, $createdAtMax: DateTime, $types: [TransactionType!]) {
  transactions(first: $first, after: $after, appId: $appId, createdAtMin: $createdAtMin, createdAtMax: $createdAtMax, types: $types) {
    edges {
      cursor
      node {
        __typename
        id
        createdAt
        ...sale
        ... on AppSubscriptionSale { billingInterval }
      }
    }
    pageInfo { hasNextPage }
  }
}
fragment sale on Transaction {
  ... on AppSubscriptionSale { chargeId app { id name } shop { id myshopifyDomain name } grossAmount { amount currencyCode } shopifyFee { amount currencyCode } netAmount { amount currencyCode } }
  ... on AppUsageSale { chargeId app { id name } shop { id myshopifyDomain name } grossAmount { amount currencyCode } shopifyFee { amount currencyCode } netAmount { amount currencyCode } }
  ... on AppOneTimeSale { chargeId app { id name } shop { id myshopifyDomain name } grossAmount { amount currencyCode } shopifyFee { amount currencyCode } netAmount { amount currencyCode } }
  ... on AppSaleAdjustment { chargeId app { id name } shop { id myshopifyDomain name } grossAmount { amount currencyCode } shopifyFee { amount currencyCode } netAmount { amount currencyCode } }
  ... on AppSaleCredit { chargeId app { id name } shop { id myshopifyDomain name } grossAmount { amount currencyCode } shopifyFee { amount currencyCode } netAmount { amount currencyCode } }
}`
