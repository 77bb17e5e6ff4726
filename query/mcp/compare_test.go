package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

// Two summary bodies in the REST shape: docs/METRICS.md 3.7's figures as the current period, and a
// previous period with less USD and no EUR at all.
const (
	currentSummary = `{"range":{"from":"2026-03-02","to":"2026-03-31"},"asOf":"2026-03-31","generatedAt":"2026-03-31T12:00:00Z",
"appId":null,"customerScope":"included","currencies":["EUR","USD"],"mixedCurrencies":true,
"byCurrency":{
 "USD":{"mrrCents":17350,"subscriptionMrrCents":13150,"usageMrrCents":4200,"arrCents":208200,"payingCustomers":2,"arpuCents":6575,
  "netRevenueRetentionRate":0.8942,"largestCustomerShare":0.4755,"topFiveCustomerShare":1,"topTenCustomerShare":1,
  "usage":{"usageMrrCents":4200,"billedUsage":{"grossCents":4200,"feesCents":752,"netCents":3448,"transactionCount":2,"complete":true},
   "observedUsageCharges":{"grossCents":4300,"count":4}}},
 "EUR":{"mrrCents":3900,"subscriptionMrrCents":3900,"usageMrrCents":0,"arrCents":46800,"payingCustomers":1,"arpuCents":3900,
  "netRevenueRetentionRate":null,"largestCustomerShare":1,"topFiveCustomerShare":1,"topTenCustomerShare":1,
  "usage":{"usageMrrCents":0,"billedUsage":{"grossCents":0,"feesCents":0,"netCents":0,"transactionCount":0,"complete":true},
   "observedUsageCharges":{"grossCents":0,"count":0}}}},
"metricBases":{"netRevenueRetention":"subscription_mrr","customerConcentration":"total_mrr"},
"usageActivity":{"source":"received_usage_events","eventCount":12,"totalCount":40,"byName":[{"name":"orders_synced","eventCount":12,"totalCount":40}],
 "lastOccurredAt":"2026-03-30T10:00:00Z","loaded":true,"complete":null},
"source":"service_synced_partner_data","staleDataWarning":null,
"coverage":{"transactions":{"complete":true,"coverageFrom":"2024-06-01","coverageThrough":"2026-03-31","truncated":false}}}`
	previousSummary = `{"range":{"from":"2026-01-31","to":"2026-03-01"},"asOf":"2026-03-01","generatedAt":"2026-03-31T12:00:00Z",
"appId":null,"customerScope":"included","currencies":["USD"],"mixedCurrencies":false,
"byCurrency":{
 "USD":{"mrrCents":15000,"subscriptionMrrCents":13150,"usageMrrCents":1850,"arrCents":180000,"payingCustomers":2,"arpuCents":6575,
  "netRevenueRetentionRate":1.0214,"largestCustomerShare":0.55,"topFiveCustomerShare":1,"topTenCustomerShare":1,
  "usage":{"usageMrrCents":1850,"billedUsage":{"grossCents":0,"feesCents":0,"netCents":0,"transactionCount":0,"complete":false},
   "observedUsageCharges":{"grossCents":900,"count":1}}}},
"metricBases":{"netRevenueRetention":"subscription_mrr","customerConcentration":"total_mrr"},
"usageActivity":{"source":"received_usage_events","eventCount":0,"totalCount":0,"byName":[],"lastOccurredAt":null,"loaded":true,"complete":null},
"source":"service_synced_partner_data","staleDataWarning":"Platform data for app a was last synced at 2026-03-01T05:00:00Z, more than 24 hours before this response.",
"coverage":{"transactions":{"complete":false,"coverageFrom":"2026-02-10","coverageThrough":"2026-03-01","truncated":false}}}`
)

// TestCompareSummaries pins compare_periods' output shape and arithmetic: integers exactly, ratios
// to 4 decimals, null where a currency or a ratio is missing, arrays left out.
func TestCompareSummaries(t *testing.T) {
	got, err := CompareSummaries(json.RawMessage(currentSummary), json.RawMessage(previousSummary))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	testenv.Golden(t, "testdata/compare_periods.golden.json", out.Bytes())

	var r struct {
		ByCurrency map[string]struct {
			InCurrent, InPrevious bool
			Changes               map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"mrrCents":                `{"current":17350,"previous":15000,"absoluteChange":2350,"relativeChange":0.1567}`,
		"netRevenueRetentionRate": `{"current":0.8942,"previous":1.0214,"absoluteChange":-0.1272,"relativeChange":-0.1245}`,
		"payingCustomers":         `{"current":2,"previous":2,"absoluteChange":0,"relativeChange":0}`,
	} {
		if g := string(r.ByCurrency["USD"].Changes[field]); g != want {
			t.Errorf("USD %s = %s, want %s", field, g, want)
		}
	}
	eur := r.ByCurrency["EUR"]
	if !eur.InCurrent || eur.InPrevious || string(eur.Changes["mrrCents"]) != `{"current":3900,"previous":null,"absoluteChange":null,"relativeChange":null}` {
		t.Errorf("EUR, absent before: %+v", eur)
	}
}

func TestNumberChange(t *testing.T) {
	for _, c := range []struct{ cur, prev, abs, rel string }{
		{"100", "0", "100", ""},
		{"0", "100", "-100", "-1"},
		{"-50", "-100", "50", "0.5"},
		{"9007199254740993", "9007199254740992", "1", "0"},
		{"0.3", "0.1", "0.2", "2"},
	} {
		got := numberChange(json.Number(c.cur), json.Number(c.prev))
		if string(got.AbsoluteChange) != c.abs || string(got.RelativeChange) != c.rel {
			t.Errorf("%s vs %s: %+v", c.cur, c.prev, got)
		}
	}
}
