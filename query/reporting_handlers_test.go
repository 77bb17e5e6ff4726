package query_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/query/tracking"
)

// rptEnv is the reporting API over the golden datasets: workspace "acme" with app-1 (METRICS 3.7)
// and app-2/app-3 (reportingtest.ExampleLifecycle, whose shop shared.myshopify.com is in both)
// selected, on the fixed day reportingtest.Today.
type rptEnv struct {
	url       string
	key       string
	revoked   string
	lapsed    string
	customers map[string]reportingtest.Customer
	broken    string // an API whose ClickHouse connection is closed
}

func rptSetup(t *testing.T) rptEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	s := tenant.Store
	for _, app := range []string{"app-2", "app-3"} {
		if err := s.PutApp(ctx, "test", controlplane.App{ID: app, Name: app}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetSelectedApps(ctx, "test", "acme", []string{"app-1", "app-2", "app-3"}); err != nil {
		t.Fatal(err)
	}
	e := rptEnv{}
	var err error
	if e.key, _, err = s.CreateAPIKey(ctx, "test", "acme", "reporting", controlplane.ScopeRead); err != nil {
		t.Fatal(err)
	}
	var old controlplane.APIKey
	if e.revoked, old, err = s.CreateAPIKey(ctx, "test", "acme", "old", controlplane.ScopeRead); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeAPIKey(ctx, "test", old.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateWorkspace(ctx, "test", "lapsed", "Lapsed", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	if e.lapsed, _, err = s.CreateAPIKey(ctx, "test", "lapsed", "reporting", controlplane.ScopeRead); err != nil {
		t.Fatal(err)
	}

	fx := reportingtest.New(db.Conn, tenant.Source.WorkspaceID)
	e.customers = reportingtest.Example37(fx, "app-1")
	for k, c := range reportingtest.ExampleLifecycle(fx, "app-2", "app-3") {
		e.customers[k] = c
	}
	fx.Flush(t)

	serve := func(rep query.Reporting) string {
		gin.SetMode(gin.TestMode)
		engine := gin.New()
		(&query.API{Keys: s, Sources: s, Tracking: tracking.New(db.Conn), Reporting: rep,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: reportingtest.Clock}).Register(engine)
		srv := httptest.NewServer(engine)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	e.url = serve(reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock)))
	closed, err := clickhousex.Open(ctx, db.CH)
	if err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	e.broken = serve(reporting.New(closed, reporting.WithClock(reportingtest.Clock)))
	return e
}

// get requests path with the key (none when key is "") and returns the status and body.
func (e rptEnv) get(t *testing.T, base, path, key string) (int, []byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodGet, base+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body, resp.Header
}

var generatedAt = regexp.MustCompile(`"generatedAt":"[^"]*"`)

// rptGolden indents a body and replaces generatedAt before comparing it with its golden file.
func rptGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, generatedAt.ReplaceAll(body, []byte(`"generatedAt":"<generatedAt>"`)), "", "  "); err != nil {
		t.Fatalf("%s: %v: %s", name, err, body)
	}
	out.WriteByte('\n')
	testenv.Golden(t, "testdata/reporting_"+name+".golden.json", out.Bytes())
}

func TestReportingGoldenBodies(t *testing.T) {
	e := rptSetup(t)
	alpha := e.customers["alpha"]
	for _, tc := range []struct{ name, path string }{
		{"summary", "/api/v1/summary"},
		{"summary_app1", "/api/v1/summary?appId=app-1"},
		{"summary_app1_all", "/api/v1/summary?appId=app-1&customerScope=all"},
		{"summary_app1_excluded", "/api/v1/summary?appId=app-1&customerScope=excluded"},
		{"summary_eur", "/api/v1/summary?currency=eur&from=2026-03-02&to=2026-03-31"},
		{"metric_mrr", "/api/v1/metrics/mrr?appId=app-1"},
		{"metric_arr", "/api/v1/metrics/arr?appId=app-1"},
		{"metric_usage", "/api/v1/metrics/usage?appId=app-1"},
		{"metric_nrr", "/api/v1/metrics/net-revenue-retention?appId=app-1"},
		{"metric_concentration", "/api/v1/metrics/customer-concentration?appId=app-1&customerScope=all"},
		{"customers", "/api/v1/customers?limit=5"},
		{"customers_excluded", "/api/v1/customers?customerScope=excluded"},
		{"customer_alpha", "/api/v1/customers/alpha.myshopify.com?limit=5"},
		{"customer_papa", "/api/v1/customers/" + e.customers["papa"].ID()},
		{"customer_alpha_past", "/api/v1/customers/" + alpha.ID() + "?from=2026-02-01&to=2026-03-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := e.get(t, e.url, tc.path, e.key)
			if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q: %s", status, h.Get("Cache-Control"), body)
			}
			rptGolden(t, tc.name, body)
			checkShape(t, tc.name, body)
		})
	}

	// The hand-computed figures of METRICS 3.7, through HTTP.
	_, body, _ := e.get(t, e.url, "/api/v1/summary?appId=app-1", e.key)
	var sum struct {
		AppID      *string
		ByCurrency map[string]struct {
			MRRCents, SubscriptionMRRCents, UsageMRRCents, ARRCents, PayingCustomers, ARPUCents int64
			NetRevenueRetentionRate, LargestCustomerShare                                       *float64
		}
	}
	if err := json.Unmarshal(body, &sum); err != nil {
		t.Fatal(err)
	}
	usd := sum.ByCurrency["USD"]
	if *sum.AppID != "app-1" || usd.MRRCents != 17350 || usd.SubscriptionMRRCents != 13150 || usd.UsageMRRCents != 4200 ||
		usd.ARRCents != 208200 || usd.PayingCustomers != 2 || usd.ARPUCents != 6575 || *usd.NetRevenueRetentionRate != 0.8193 ||
		*usd.LargestCustomerShare != 0.4755 {
		t.Fatalf("USD: %+v", usd)
	}

	// Paging: the next page starts after the cursor and together the pages list every included
	// customer once, in ID order.
	var ids []string
	path := "/api/v1/customers?limit=4"
	for path != "" {
		_, body, _ := e.get(t, e.url, path, e.key)
		var page struct {
			Customers  []struct{ ID string }
			NextCursor *string
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Customers {
			ids = append(ids, c.ID)
		}
		path = ""
		if page.NextCursor != nil {
			path = "/api/v1/customers?limit=4&cursor=" + url.QueryEscape(*page.NextCursor)
		}
	}
	if len(ids) != len(e.customers)-1 || !slices.IsSorted(ids) || slices.Contains(ids, e.customers["golf"].ID()) {
		t.Fatalf("paged ids %v", ids)
	}
}

func TestReportingErrors(t *testing.T) {
	e := rptSetup(t)
	alpha := e.customers["alpha"].ID()
	for _, tc := range []struct {
		name, base, path, key string
		status                int
		code                  string
	}{
		{"malformed from", e.url, "/api/v1/summary?from=2026-3-1", e.key, 400, "invalid_parameter"},
		{"from after to", e.url, "/api/v1/summary?from=2026-03-10&to=2026-03-01", e.key, 400, "invalid_parameter"},
		{"to after today", e.url, "/api/v1/summary?to=2026-04-01", e.key, 400, "invalid_parameter"},
		{"range over a year", e.url, "/api/v1/metrics/mrr?from=2024-01-01&to=2026-03-31", e.key, 400, "invalid_parameter"},
		{"currency not three letters", e.url, "/api/v1/summary?currency=US", e.key, 400, "invalid_parameter"},
		{"unselected app", e.url, "/api/v1/summary?appId=app-9", e.key, 400, "invalid_parameter"},
		{"bad customer scope", e.url, "/api/v1/metrics/arr?customerScope=everyone", e.key, 400, "invalid_parameter"},
		{"customers limit 0", e.url, "/api/v1/customers?limit=0", e.key, 400, "invalid_parameter"},
		{"customers limit 201", e.url, "/api/v1/customers?limit=201", e.key, 400, "invalid_parameter"},
		{"customers bad cursor", e.url, "/api/v1/customers?cursor=abc", e.key, 400, "invalid_parameter"},
		{"customers bad scope", e.url, "/api/v1/customers?customerScope=none", e.key, 400, "invalid_parameter"},
		{"timeline limit 51", e.url, "/api/v1/customers/" + alpha + "?limit=51", e.key, 400, "invalid_parameter"},
		{"timeline limit 0", e.url, "/api/v1/customers/" + alpha + "?limit=0", e.key, 400, "invalid_parameter"},
		{"customers by currency", e.url, "/api/v1/customers?currency=USD", e.key, 400, "invalid_parameter"},
		{"customer by currency", e.url, "/api/v1/customers/" + alpha + "?currency=USD", e.key, 400, "invalid_parameter"},
		{"customer with a scope", e.url, "/api/v1/customers/" + alpha + "?customerScope=all", e.key, 400, "invalid_parameter"},
		{"no key", e.url, "/api/v1/summary", "", 401, "unauthorized"},
		{"unknown key", e.url, "/api/v1/customers", "revtrack_sk_nope", 401, "unauthorized"},
		{"revoked key", e.url, "/api/v1/metrics/mrr", e.revoked, 401, "unauthorized"},
		{"lapsed workspace", e.url, "/api/v1/summary", e.lapsed, 403, "subscription_inactive"},
		{"lapsed workspace detail", e.url, "/api/v1/customers/" + alpha, e.lapsed, 403, "subscription_inactive"},
		{"unknown metric", e.url, "/api/v1/metrics/churn", e.key, 404, "not_found"},
		{"unknown customer", e.url, "/api/v1/customers/cus_00000000000000000000", e.key, 404, "not_found"},
		{"unknown domain", e.url, "/api/v1/customers/nobody.myshopify.com", e.key, 404, "not_found"},
		{"customer of an app outside appId", e.url, "/api/v1/customers/" + alpha + "?appId=app-2", e.key, 404, "not_found"},
		{"shared domain", e.url, "/api/v1/customers/shared.myshopify.com", e.key, 409, "ambiguous_customer"},
		{"summary, ClickHouse down", e.broken, "/api/v1/summary", e.key, 503, "unavailable"},
		{"metric, ClickHouse down", e.broken, "/api/v1/metrics/usage", e.key, 503, "unavailable"},
		{"customers, ClickHouse down", e.broken, "/api/v1/customers", e.key, 503, "unavailable"},
		{"customer, ClickHouse down", e.broken, "/api/v1/customers/" + alpha, e.key, 503, "unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := e.get(t, tc.base, tc.path, tc.key)
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%d: %s", status, body)
			}
			msg, _ := got["message"].(string)
			if status != tc.status || got["error"] != tc.code || msg == "" || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("got %d %s (%q), want %d %s", status, body, h.Get("Cache-Control"), tc.status, tc.code)
			}
			want := 2
			if tc.status == http.StatusConflict {
				want = 3 // customerIds
			}
			if len(got) != want {
				t.Fatalf("error body fields: %s", body)
			}
		})
	}
	// The 409 lists the matching IDs; each one, or the domain with one app, resolves.
	_, body, _ := e.get(t, e.url, "/api/v1/customers/shared.myshopify.com", e.key)
	rptGolden(t, "customer_ambiguous", body)
	var amb struct{ CustomerIDs []string }
	_ = json.Unmarshal(body, &amb)
	want := []string{e.customers["uniform-app-2"].ID(), e.customers["uniform-app-3"].ID()}
	slices.Sort(want)
	if !slices.Equal(amb.CustomerIDs, want) {
		t.Fatalf("ids %v, want %v", amb.CustomerIDs, want)
	}
	for _, p := range []string{"/api/v1/customers/" + want[0], "/api/v1/customers/shared.myshopify.com?appId=app-3"} {
		if status, body, _ := e.get(t, e.url, p, e.key); status != http.StatusOK {
			t.Fatalf("%s: %d %s", p, status, body)
		}
	}
}

// ---- contract: every field's type ----

// kinds of JSON values a field may hold.
const (
	kInt       = "integer"
	kNum       = "number"
	kNumOrNull = "number|null"
	kStr       = "string"
	kStrOrNull = "string|null"
	kBool      = "boolean"
	kDate      = "date"
	kDateNull  = "date|null"
	kTime      = "timestamp"
	kTimeNull  = "timestamp|null"
	kCur       = "currency"
	kNull      = "null"
)

// Field shapes per response, by path: "a.b" for objects, "a[]" for array items, "a.*" for the
// values of an object keyed by currency. A "?" suffix marks an optional field. Every field of a
// response must be listed and have its kind.
var (
	coverageShape = map[string]string{
		"coverage.transactions.complete": kBool, "coverage.transactions.coverageFrom": kDateNull,
		"coverage.transactions.coverageThrough": kDateNull, "coverage.transactions.truncated": kBool,
		"coverage.lifecycle.complete": kBool, "coverage.lifecycle.coverageFrom": kDateNull, "coverage.lifecycle.coverageThrough": kDateNull,
		"coverage.observedUsageCharges.complete": kBool, "coverage.observedUsageCharges.coverageFrom": kDateNull,
		"coverage.observedUsageCharges.coverageThrough": kDateNull,
		"coverage.usageActivity.source":                 kStr, "coverage.usageActivity.loaded": kBool, "coverage.usageActivity.complete": kNull,
	}
	appCoverageShape = map[string]string{
		"coverage.apps[].appId": kStr, "coverage.apps[].lastSuccessfulSyncAt": kTimeNull, "coverage.apps[].lastSyncStatus": kStrOrNull,
		"coverage.apps[].transactions.complete": kBool, "coverage.apps[].transactions.coverageFrom": kDateNull,
		"coverage.apps[].transactions.coverageThrough": kDateNull, "coverage.apps[].transactions.truncated": kBool,
		"coverage.apps[].lifecycle.complete": kBool, "coverage.apps[].lifecycle.coverageFrom": kDateNull,
		"coverage.apps[].lifecycle.coverageThrough": kDateNull, "coverage.apps[].observedUsageCharges.complete": kBool,
		"coverage.apps[].observedUsageCharges.coverageFrom": kDateNull, "coverage.apps[].observedUsageCharges.coverageThrough": kDateNull,
	}
	envelopeShape = map[string]string{
		"range.from": kDate, "range.to": kDate, "asOf": kDate, "generatedAt": kTime, "appId": kStrOrNull, "customerScope": kStr,
		"currencies[]": kCur, "mixedCurrencies": kBool, "source": kStr, "staleDataWarning": kStrOrNull,
	}
	usageShape = map[string]string{
		"usageMrrCents": kInt, "billedUsage.grossCents": kInt, "billedUsage.feesCents": kInt, "billedUsage.netCents": kInt,
		"billedUsage.transactionCount": kInt, "billedUsage.complete": kBool, "observedUsageCharges.grossCents": kInt,
		"observedUsageCharges.count": kInt,
	}
	blockShape = map[string]string{
		"mrrCents": kInt, "subscriptionMrrCents": kInt, "usageMrrCents": kInt, "arrCents": kInt, "payingCustomers": kInt, "arpuCents": kInt,
		"netRevenueRetentionRate": kNumOrNull, "largestCustomerShare": kNumOrNull, "topFiveCustomerShare": kNumOrNull,
		"topTenCustomerShare": kNumOrNull,
	}
	customerShape = map[string]string{
		"id": kStr, "appId": kStr, "name": kStr, "domain": kStr, "status": kStr, "paying": kBool, "reportExcluded": kBool, "amrCents": kInt,
		"amrCurrency?": kCur, "ltvByCurrencyCents.*?": kInt, "plan?": kStr, "tags[]?": kStr, "health": kStr, "firstSeen?": kTime,
		"lastActive?": kTime, "storeClassification": kStr,
	}
	usageActivityShape = map[string]string{
		"source": kStr, "eventCount": kInt, "totalCount": kInt, "byName[].name": kStr, "byName[].eventCount": kInt,
		"byName[].totalCount": kInt, "lastOccurredAt": kTimeNull, "loaded": kBool, "complete": kNull,
	}
)

func merge(prefix string, shapes ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range shapes {
		for k, v := range s {
			out[prefix+k] = v
		}
	}
	return out
}

func shapeOf(name string) map[string]string {
	switch {
	case name == "customers" || name == "customers_excluded":
		return merge("", map[string]string{"nextCursor": kStrOrNull, "range.from": kDate, "range.to": kDate, "customerScope": kStr,
			"source": kStr}, merge("customers[].", customerShape))
	case len(name) > 9 && name[:9] == "customer_":
		return merge("", map[string]string{"range.from": kDate, "range.to": kDate, "source": kStr,
			"timeline[].id": kStr, "timeline[].occurredAt": kTime, "timeline[].source": kStr, "timeline[].type": kStr,
			"timeline[].chargeName?": kStr, "timeline[].amountCents?": kInt, "timeline[].grossCents?": kInt, "timeline[].netCents?": kInt,
			"timeline[].currency?": kCur, "timeline[].reason?": kStr, "timeline[].description?": kStr,
			"analytics.asOf": kTime, "analytics.paying.paying": kBool, "analytics.paying.reason": kStr, "analytics.currencies[]": kCur,
			"analytics.current.asOf": kDate, "analytics.current.byCurrency.*.mrrCents": kInt,
			"analytics.current.byCurrency.*.subscriptionMrrCents": kInt, "analytics.current.byCurrency.*.usageMrrCents": kInt,
			"analytics.last30Days.range.from": kDate, "analytics.last30Days.range.to": kDate,
			"analytics.last30Days.byCurrency.*.grossCents": kInt, "analytics.last30Days.byCurrency.*.feeCents": kInt,
			"analytics.last30Days.byCurrency.*.netCents": kInt, "analytics.last30Days.byCurrency.*.totalDeductionsCents": kInt,
			"analytics.last30Days.byCurrency.*.subscriptionCents": kInt, "analytics.last30Days.byCurrency.*.usageCents": kInt,
			"analytics.last30Days.byCurrency.*.oneTimeCents": kInt, "analytics.last30Days.byCurrency.*.refundCents": kInt,
			"analytics.last30Days.byCurrency.*.transactionCount":                    kInt,
			"analytics.last30Days.byCurrency.*.observedUsageCharges.grossCents":     kInt,
			"analytics.last30Days.byCurrency.*.observedUsageCharges.count":          kInt,
			"analytics.last30Days.byCurrency.*.observedUsageCharges.lastOccurredAt": kTimeNull,
		}, merge("customer.", customerShape), merge("analytics.last30Days.usageActivity.", usageActivityShape),
			merge("analytics.", coverageShape))
	case len(name) > 7 && name[:7] == "metric_":
		s := merge("", envelopeShape, coverageShape, appCoverageShape, map[string]string{"metric": kStr, "metricBasis?": kStr})
		switch name {
		case "metric_mrr":
			return merge("", s, map[string]string{"byCurrency.*.mrrCents": kInt, "byCurrency.*.subscriptionMrrCents": kInt,
				"byCurrency.*.usageMrrCents": kInt})
		case "metric_arr":
			return merge("", s, map[string]string{"byCurrency.*.arrCents": kInt})
		case "metric_usage":
			return merge("", s, merge("byCurrency.*.", usageShape))
		case "metric_nrr":
			return merge("", s, map[string]string{"byCurrency.*.netRevenueRetentionRate": kNumOrNull})
		}
		return merge("", s, map[string]string{"byCurrency.*.largestCustomerShare": kNumOrNull,
			"byCurrency.*.topFiveCustomerShare": kNumOrNull, "byCurrency.*.topTenCustomerShare": kNumOrNull})
	}
	return merge("", envelopeShape, coverageShape, appCoverageShape, merge("byCurrency.*.", blockShape),
		merge("byCurrency.*.usage.", usageShape), merge("usageActivity.", usageActivityShape),
		map[string]string{"metricBases.netRevenueRetention": kStr, "metricBases.customerConcentration": kStr})
}

var (
	dateRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timeRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

// checkShape walks a response and checks that every field is listed in its shape with the right
// kind, and that every required field of an object that is present is there.
func checkShape(t *testing.T, name string, body []byte) {
	t.Helper()
	shape := shapeOf(name)
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			dynamic := len(path) >= 10 && (path[len(path)-10:] == "byCurrency" || (len(path) >= 18 && path[len(path)-18:] == "ltvByCurrencyCents"))
			for k, val := range x {
				child := k
				if dynamic {
					if !currencyRe.MatchString(k) {
						t.Errorf("%s: %s.%s is not keyed by currency", name, path, k)
					}
					child = "*"
				}
				if path != "" {
					child = path + "." + child
				}
				walk(child, val)
			}
			return
		case []any:
			for _, item := range x {
				walk(path+"[]", item)
			}
			seen[path+"[]"] = true
			return
		}
		kind, ok := shape[path]
		if !ok {
			kind, ok = shape[path+"?"]
		}
		if !ok {
			t.Errorf("%s: field %s (%v) is not in the contract", name, path, v)
			return
		}
		seen[path] = true
		if !kindOK(kind, v) {
			t.Errorf("%s: %s = %v is not %s", name, path, v, kind)
		}
	}
	walk("", v)
	for p := range shape {
		if p[len(p)-1] == '?' {
			continue
		}
		if !seen[p] && parentPresent(p, seen) {
			t.Errorf("%s: required field %s is missing", name, p)
		}
	}
}

// parentPresent reports whether a required field's enclosing repeated or keyed object occurred (a
// field under an empty array or an empty byCurrency is not required).
func parentPresent(p string, seen map[string]bool) bool {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '*' || (p[i] == ']' && i > 0 && p[i-1] == '[') {
			prefix := p[:i+1]
			for s := range seen {
				if len(s) > len(prefix) && s[:len(prefix)] == prefix {
					return true
				}
			}
			return false
		}
	}
	return true
}

func kindOK(kind string, v any) bool {
	switch kind {
	case kInt:
		n, ok := v.(json.Number)
		_, err := n.Int64()
		return ok && err == nil
	case kNum:
		_, ok := v.(json.Number)
		return ok
	case kNumOrNull:
		_, ok := v.(json.Number)
		return ok || v == nil
	case kStr:
		_, ok := v.(string)
		return ok
	case kStrOrNull:
		_, ok := v.(string)
		return ok || v == nil
	case kBool:
		_, ok := v.(bool)
		return ok
	case kDate, kDateNull:
		s, ok := v.(string)
		return (ok && dateRe.MatchString(s)) || (kind == kDateNull && v == nil)
	case kTime, kTimeNull:
		s, ok := v.(string)
		return (ok && (timeRe.MatchString(s) || s == "<generatedAt>")) || (kind == kTimeNull && v == nil)
	case kCur:
		s, ok := v.(string)
		return ok && currencyRe.MatchString(s)
	case kNull:
		return v == nil
	}
	return false
}
