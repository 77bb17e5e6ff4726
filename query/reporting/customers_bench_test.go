package reporting

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// BenchmarkCustomerSearch times the customer list's q and paying filters on the synthetic workspace
// of BenchmarkSyntheticLoad (50,000 customers, domains shopN.myshopify.com, names "Shop N";
// REPORTING_LOAD_TX transactions, 100,000 by default: the list reads a page's customers only, so
// the transactions barely matter), result cache off. Run it by hand:
// `go test -run '^$' -bench CustomerSearch -benchtime 1x ./query/reporting/`.
func BenchmarkCustomerSearch(b *testing.B) {
	tx := 100_000
	if v, err := strconv.Atoi(os.Getenv("REPORTING_LOAD_TX")); err == nil {
		tx = v
	}
	conn, _ := loadDatabase(b, 50_000, tx)
	s := New(conn, WithClock(reportingtest.Clock), WithResultCache(0))
	c := context.Background()
	sc := Scope{WorkspaceID: "ws", AppIDs: []string{"app-0", "app-1", "app-2"}}
	rng := Range{From: MustDate("2026-03-02"), To: MustDate("2026-03-31")}
	yes, no := true, false
	for _, tc := range []struct {
		name   string
		search string
		paying *bool
	}{
		{"no filter", "", nil},
		{"q matching one shop (shop12345)", "shop12345", nil},
		{"q matching about a fifth (SHOP1)", "SHOP1", nil},
		{"q matching nothing", "no-such-shop", nil},
		{"paying=true", "", &yes},
		{"paying=false", "", &no},
		{"q=SHOP1 and paying=false", "SHOP1", &no},
	} {
		req := ListRequest{Scope: sc, Range: rng, CustomerScope: ScopeIncluded, Limit: 50, Search: tc.search, Paying: tc.paying}
		var ds []time.Duration
		var page CustomerList
		for i := range 12 {
			start := time.Now()
			var err error
			if page, err = s.Customers(c, req); err != nil {
				b.Fatal(err)
			}
			if i >= 2 { // two warm-ups
				ds = append(ds, time.Since(start))
			}
		}
		slices.Sort(ds)
		b.Logf("%-36s first page of 50: %2d customers, nextCursor %-5v  p50 %6.1f ms  max %6.1f ms", tc.name, len(page.Customers),
			page.NextCursor != nil, float64(ds[len(ds)/2].Microseconds())/1000, float64(ds[len(ds)-1].Microseconds())/1000)
	}
}
