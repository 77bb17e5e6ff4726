package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/schemas"
)

func lat(ms ...int) []time.Duration {
	var d []time.Duration
	for _, m := range ms {
		d = append(d, time.Duration(m)*time.Millisecond)
	}
	return d
}

func TestGoals(t *testing.T) {
	rest := result{target: target{name: "summary"}, lat: lat(90, 100, 110)}
	byName := map[string]result{"summary": rest}
	abs := goal{maxP50: 150 * time.Millisecond}
	if pass, ok := abs.check(rest, byName); !ok || !pass {
		t.Errorf("100 ms against p50 ≤ 150 ms: pass %v ok %v", pass, ok)
	}
	if pass, ok := (goal{maxP50: 50 * time.Millisecond}).check(rest, byName); !ok || pass {
		t.Errorf("100 ms against p50 ≤ 50 ms: pass %v ok %v", pass, ok)
	}
	// A goal relative to another target of the same run (the MCP summary against the REST one).
	rel := goal{relTo: "summary", maxRatio: 1.2}
	if pass, ok := rel.check(result{lat: lat(115, 118, 119)}, byName); !ok || !pass {
		t.Errorf("118 ms against 1.2× 100 ms: pass %v ok %v", pass, ok)
	}
	if pass, ok := rel.check(result{lat: lat(125, 130, 140)}, byName); !ok || pass {
		t.Errorf("130 ms against 1.2× 100 ms: pass %v ok %v", pass, ok)
	}
	if _, ok := rel.check(result{lat: lat(1)}, map[string]result{"summary": {unavailable: "not available"}}); ok {
		t.Error("judged against a reference that was not measured")
	}
	if _, ok := abs.check(result{unavailable: "not available"}, byName); ok {
		t.Error("judged a target that was not measured")
	}
	if _, ok := (goal{}).check(rest, byName); ok {
		t.Error("judged a target without a goal")
	}
	if abs.String() != "p50 ≤ 150.0 ms" || rel.String() != "p50 ≤ 1.2× summary" {
		t.Errorf("goal texts %q, %q", abs, rel)
	}
}

// The router's 404 (no such route) is "not available"; the API's JSON 404 is an answer.
func TestRouteMissing(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/api/v1/customers/:id", func(c *gin.Context) {
		c.JSON(http.StatusNotFound, gin.H{"error": "not_found", "message": "customer unavailable in this workspace"})
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	a := newAPI(srv.URL, "revtrack_sk_x")
	o, _ := a.get(context.Background(), "/api/v1/summary", false)
	if o.status != http.StatusNotFound || !o.missing {
		t.Errorf("missing route: %+v", o)
	}
	o, _ = a.get(context.Background(), "/api/v1/customers/cus_1", false)
	if o.status != http.StatusNotFound || o.missing || !strings.Contains(o.body, "not_found") {
		t.Errorf("JSON 404: %+v", o)
	}
	if !routeMissing(http.StatusNotImplemented, "application/json", []byte(`{"error":"x"}`)) {
		t.Error("501 is not available")
	}
	if routeMissing(http.StatusServiceUnavailable, "text/plain", nil) {
		t.Error("503 is a failure, not a missing route")
	}
}

// measure drops what never answered 200 during the warm-up (as not available on 404, as failed
// otherwise) and measures the rest, counting later failures as errors.
func TestMeasure(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	var calls atomic.Int64
	r.GET("/ok", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"n": 1}) })
	r.GET("/flaky", func(c *gin.Context) {
		if n := calls.Add(1); n > 3 && n%2 == 0 {
			c.JSON(http.StatusServiceUnavailable, gin.H{"error": "unavailable", "message": "retry"})
			return
		}
		c.JSON(http.StatusOK, gin.H{})
	})
	r.GET("/broken", func(c *gin.Context) { c.JSON(http.StatusInternalServerError, gin.H{"error": "x", "message": "boom"}) })
	r.GET("/gone", func(c *gin.Context) {
		c.JSON(http.StatusNotFound, gin.H{"error": "not_found", "message": "no customers"})
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	a := newAPI(srv.URL, "revtrack_sk_x")
	ts := []target{
		{name: "ok", probe: a.path(fixed("/ok")), baseline: true},
		{name: "flaky", probe: a.path(fixed("/flaky"))},
		{name: "missing", probe: a.path(fixed("/nope"))},
		{name: "broken", probe: a.path(fixed("/broken"))},
		{name: "gone", probe: a.path(fixed("/gone"))},
	}
	res := measure(context.Background(), ts, 2, 10)
	if !res[0].available() || len(res[0].lat) != 10 || res[0].errors != 0 || res[0].meanBytes() != int64(len(`{"n":1}`)) {
		t.Errorf("ok: %+v", res[0])
	}
	if !res[1].available() || len(res[1].lat)+res[1].errors != 10 || res[1].errors == 0 || !strings.Contains(res[1].lastErr, "503") {
		t.Errorf("flaky: %+v", res[1])
	}
	if res[2].available() || !strings.Contains(res[2].unavailable, "no such route") {
		t.Errorf("missing: %+v", res[2])
	}
	if res[3].available() || res[3].unavailable != "" || !strings.Contains(res[3].failed, "HTTP 500") {
		t.Errorf("broken: %+v", res[3])
	}
	if res[4].available() || !strings.Contains(res[4].unavailable, "no customers") {
		t.Errorf("gone: %+v", res[4])
	}

	// The report: not-available rows, a failure as a problem, ratios against the baseline.
	rep := report{results: res, opts: options{warm: 2, rounds: 10, queryCommand: "query"}}
	var out bytes.Buffer
	rep.printQueries(&out)
	for _, want := range []string{"| missing | not available: no such route yet (HTTP 404) |", "| ok |", "1.0×", "FAILED: every warm-up request failed: HTTP 500"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if len(rep.problems) != 2 {
		t.Errorf("problems %v, want the broken target and the flaky one's errors", rep.problems)
	}
}

// The customer list walk follows nextCursor with the -cursor-param parameter, several pages per
// request, and lands on the page it says.
func TestWalk(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	const n = 9 // customers 1..9; a cursor is the last ID of a page
	var requests atomic.Int64
	r.GET("/api/v1/customers", func(c *gin.Context) {
		requests.Add(1)
		limit, _ := strconv.Atoi(c.Query("limit"))
		after, _ := strconv.Atoi(c.Query("cursor"))
		var page []gin.H
		for id := after + 1; id <= n && len(page) < limit; id++ {
			page = append(page, gin.H{"id": id})
		}
		var next any
		if last := after + len(page); last < n {
			next = strconv.Itoa(last)
		}
		c.JSON(http.StatusOK, gin.H{"customers": page, "nextCursor": next})
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	a := newAPI(srv.URL, "revtrack_sk_x")
	for _, tc := range []struct {
		limit, step, want int
		cursor            string
		page              int
		requests          int64
	}{
		{limit: 2, step: 2, want: 4, cursor: "4", page: 3, requests: 1},  // one request of 4 skips pages 1 and 2
		{limit: 2, step: 1, want: 4, cursor: "6", page: 4, requests: 3},  // page by page
		{limit: 2, step: 4, want: 2, cursor: "2", page: 2, requests: 1},  // the step never overshoots want
		{limit: 2, step: 1, want: 50, cursor: "8", page: 5, requests: 5}, // the list ends at page 5 (customer 9)
		{limit: 20, step: 1, want: 3, cursor: "", page: 1, requests: 1},  // a single page
	} {
		requests.Store(0)
		cur, page, missing, err := a.walk(context.Background(), tc.limit, tc.step, tc.want)
		if err != nil || missing || cur != tc.cursor || page != tc.page || requests.Load() != tc.requests {
			t.Errorf("walk(%d, %d, %d) = %q, page %d, %d requests (%v %v); want %q, page %d, %d requests", tc.limit, tc.step, tc.want,
				cur, page, requests.Load(), missing, err, tc.cursor, tc.page, tc.requests)
		}
	}
	empty := httptest.NewServer(gin.New())
	defer empty.Close()
	if _, _, missing, err := newAPI(empty.URL, "k").walk(context.Background(), 50, 4, 3); !missing || err != nil {
		t.Errorf("no list route: missing %v, %v", missing, err)
	}
}

func TestDecodeRuns(t *testing.T) {
	out := `{
  "workspaceId": "w1",
  "appId": "bench-app-1",
  "runId": "r1",
  "trigger": "manual",
  "status": "succeeded",
  "startedAt": "2026-11-21T10:00:00Z",
  "finishedAt": "2026-11-21T10:05:00Z",
  "eventsCount": 7,
  "transactionsCount": 5,
  "truncated": false
}
{"workspaceId": "w1", "appId": "bench-app-2", "runId": "r2", "trigger": "manual", "status": "failed", "startedAt": "2026-11-21T10:00:00Z",
 "eventsCount": 0, "transactionsCount": 3, "truncated": false, "error": "transactions: boom"}
`
	runs, err := decodeRuns(out)
	if err != nil || len(runs) != 2 || runs[0].AppID != "bench-app-1" || runs[0].TransactionsCount != 5 || runs[1].Status != "failed" {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if err := failedRuns(runs); err == nil || !strings.Contains(err.Error(), "bench-app-2: failed transactions: boom") {
		t.Errorf("failedRuns: %v", err)
	}
}

// The samples are deterministic, carry the API's public customer IDs, and the domain sample avoids
// domains shared by several apps (they answer 409).
func TestDatasetAndSamples(t *testing.T) {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := generate(end, 0.004, 20), generate(end, 0.004, 20)
	if a.facts.Shops != 174 || a.facts.Customers == 0 || a.facts.Transactions == 0 || len(a.facts.Currencies) != 3 {
		t.Fatalf("facts %+v", a.facts)
	}
	sum := 0
	for _, n := range a.facts.AppTransactions {
		sum += n
	}
	if a.facts.CustomerKeys < 1 || a.facts.CustomerKeys > a.facts.Customers {
		t.Errorf("%d customer keys for %d customers", a.facts.CustomerKeys, a.facts.Customers)
	}
	if sum != a.facts.Transactions || len(a.facts.AppTransactions) != 3 {
		t.Errorf("transactions per app %v, %d in all", a.facts.AppTransactions, a.facts.Transactions)
	}
	if !a.facts.sameData(b.facts) || len(a.sample) != 20 || len(a.byDom) != 20 {
		t.Fatalf("samples: %d %d", len(a.sample), len(a.byDom))
	}
	for i := range a.sample {
		if a.sample[i] != b.sample[i] || a.byDom[i] != b.byDom[i] {
			t.Fatal("samples differ between two runs")
		}
	}
	shared := map[string]bool{}
	for _, d := range a.d.Truth.SharedDomains() {
		shared[d] = true
	}
	ids := map[string]string{}
	for _, c := range a.d.Truth.Customers {
		ids[schemas.CustomerPublicID(appID(a.d.Apps[c.AppIndex]), c.ShopID)] = c.ShopDomain
	}
	for _, s := range a.byDom {
		if shared[s.Domain] {
			t.Errorf("shared domain %s sampled", s.Domain)
		}
	}
	for _, s := range a.sample {
		if ids[s.ID] != s.Domain {
			t.Errorf("sample %+v is not a customer of the data set", s)
		}
	}
	// No two events of the generator share a key at this size; eventKeys counts them all.
	if a.facts.EventKeys != a.facts.Events {
		t.Errorf("event keys %d, events %d", a.facts.EventKeys, a.facts.Events)
	}
	if c := benchConfig(end, 0.0000001); c.Shops != 1 {
		t.Errorf("a tiny scale has %d shops", c.Shops)
	}
	if partnerfake.BenchConfig(end).Shops != benchConfig(end, 1).Shops {
		t.Error("scale 1 is not BenchConfig")
	}
}

// (benchkit's TestNum covers the numbers the report prints.)
func TestSeconds(t *testing.T) {
	if seconds(90*time.Minute+5*time.Second) != "1h30m05s" || seconds(65*time.Second) != "1m05s" || seconds(1500*time.Millisecond) != "1.5 s" {
		t.Error("seconds")
	}
}

// A data set loaded under other migrations is not reused: a new migration's materialized views
// would not hold the rows landed before it. The check needs no database.
func TestReuseNeedsTheSameSchema(t *testing.T) {
	mig, err := migrations()
	if err != nil || len(mig) == 0 || !strings.HasPrefix(mig[0], "0001_") {
		t.Fatalf("migrations %v, %v", mig, err)
	}
	changed := slices.Clone(mig)
	changed[0] += "0"
	why, err := (&stack{}).reusable(context.Background(), marker{Migrations: changed}, facts{})
	if err != nil || !strings.Contains(why, "schema changed") {
		t.Errorf("changed schema: %q, %v", why, err)
	}
	// 0021 adds a plain view, 0025 a view into a summary that the start-up backfill summarises,
	// 0028 and 0029 views into copies that it fills; 0007 adds views into acquisitions and shop attribution, neither.
	if !additiveOnly(mig[:27], mig) || !additiveOnly(mig[:28], mig) || additiveOnly(mig[:6], mig) || additiveOnly(mig, mig) {
		t.Errorf("additiveOnly: before 0028 %v, before 0029 %v, before 0007 %v, same %v", additiveOnly(mig[:27], mig),
			additiveOnly(mig[:28], mig), additiveOnly(mig[:6], mig), additiveOnly(mig, mig))
	}
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if !viewsFilledAtStart(ms[20:25]) || !viewsFilledAtStart(ms[27:29]) || viewsFilledAtStart(ms[6:7]) {
		t.Errorf("views filled at start: 0021–0025 %v, 0028–0029 %v, 0007 %v", viewsFilledAtStart(ms[20:25]),
			viewsFilledAtStart(ms[27:29]), viewsFilledAtStart(ms[6:7]))
	}
	why, err = (&stack{}).reusable(context.Background(), marker{Migrations: mig, Facts: facts{Shops: 1}}, facts{Shops: 2})
	if err != nil || !strings.Contains(why, "another data set") {
		t.Errorf("other data set: %q, %v", why, err)
	}
}

// The computed rows send `Cache-Control: no-cache` (REST and every request of the MCP session); the
// kept rows send none.
func TestComputedProbesAskForNoCache(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	var seen []string
	var mu sync.Mutex
	record := func(c *gin.Context) {
		mu.Lock()
		seen = append(seen, c.Request.Method+" "+c.Request.URL.Path+" "+c.GetHeader("Cache-Control"))
		mu.Unlock()
	}
	r.GET("/api/v1/summary", func(c *gin.Context) { record(c); c.JSON(http.StatusOK, gin.H{}) })
	r.Any("/api/mcp", func(c *gin.Context) { record(c); c.JSON(http.StatusServiceUnavailable, gin.H{"error": "x"}) })
	srv := httptest.NewServer(r)
	defer srv.Close()
	a := newAPI(srv.URL, "revtrack_sk_x")
	ctx := context.Background()
	for _, p := range []probe{a.path(fixed("/api/v1/summary")), a.pathComputed(fixed("/api/v1/summary")),
		a.mcpSummary("", "", false), a.mcpSummary("", "", true)} {
		p(ctx, 0)
	}
	want := []string{"GET /api/v1/summary ", "GET /api/v1/summary no-cache", "POST /api/mcp ", "POST /api/mcp no-cache"}
	if !slices.Equal(seen, want) {
		t.Errorf("requests %q, want %q", seen, want)
	}
}

// The targets: goals on the kept rows, issue 17's 100 ms on the computed summary and metrics, MCP's
// ratio on the computed pair, none on the other computed rows.
func TestTargetsKeptAndComputed(t *testing.T) {
	ts := newAPI("http://x", "k").targets(queryPlan{from: "2026-10-22", to: "2026-11-20", limit: 50, deepCursor: "cus_1", deepPage: 497})
	byName := map[string]target{}
	for _, tg := range ts {
		byName[tg.name] = tg
		if tg.computed && !strings.HasSuffix(tg.name, computedSuffix) {
			t.Errorf("%s: a computed row not labelled as such", tg.name)
		}
	}
	for name, g := range map[string]goal{
		summaryKept: {maxP50: targetSummaryP50}, summaryComputed: {maxP50: targetComputedP50},
		"MCP get_summary, kept": {},
		"MCP get_summary, computed (first request after new data)": {relTo: summaryComputed, maxRatio: 1.2},
		"metric mrr, kept": {},
		"metric mrr, computed (first request after new data)":                    {maxP50: targetComputedP50},
		"metric usage, computed (first request after new data)":                  {maxP50: targetComputedP50},
		"metric customer-concentration, computed (first request after new data)": {maxP50: targetComputedP50},
		"customers, first page of 50, kept":                                      {maxP50: targetCustomerP50},
		"customers, first page of 50, computed (first request after new data)":   {},
		"customers, page 497 of 50, kept":                                        {maxP50: targetCustomerP50},
	} {
		tg, ok := byName[name]
		if !ok {
			t.Errorf("no target %q", name)
			continue
		}
		if tg.goal != g {
			t.Errorf("%s: goal %+v, want %+v", name, tg.goal, g)
		}
	}
	if byName["MCP get_summary, kept"].restOf != summaryKept || byName["MCP get_summary, computed (first request after new data)"].restOf != summaryComputed {
		t.Error("the MCP rows are not paired with their REST summaries")
	}
}

// The report judges MCP on the computed pair and gives the kept pair's overhead in milliseconds.
func TestReportMCPPairs(t *testing.T) {
	mcpKept, mcpComputed := mcpSummaryName+keptSuffix, mcpSummaryName+computedSuffix
	rep := report{opts: options{warm: 1, rounds: 3, queryCommand: "query"}, results: []result{
		{target: target{name: baselineName, baseline: true}, lat: lat(4, 4, 4)},
		{target: target{name: summaryKept, goal: goal{maxP50: targetSummaryP50}}, lat: lat(2, 2, 3)},
		{target: target{name: summaryComputed, computed: true}, lat: lat(380, 400, 420)},
		{target: target{name: mcpKept, restOf: summaryKept}, lat: lat(3, 3, 4)},
		{target: target{name: mcpComputed, computed: true, restOf: summaryComputed, goal: goal{relTo: summaryComputed, maxRatio: 1.2}},
			lat: lat(390, 410, 430)},
	}}
	var out bytes.Buffer
	if missed := rep.printQueries(&out); missed {
		t.Errorf("a goal missed:\n%s", out.String())
	}
	for _, want := range []string{
		"| " + summaryComputed + " | 400.0 ms | 420.0 ms | 400.0 ms | 420.0 ms | 3 | 0 | 100.0× | no goal |  |",
		"| " + mcpKept + " | 3.0 ms | 4.0 ms | 3.3 ms | 4.0 ms | 3 | 0 | 0.8× | no goal |  |",
		"| " + mcpComputed + " | 410.0 ms | 430.0 ms | 410.0 ms | 430.0 ms | 3 | 0 | 102.5× | p50 ≤ 1.2× summary, computed (1.02×) | PASS |",
		"| computed (first request after new data) | 410.0 ms | 400.0 ms | 430.0 ms | 420.0 ms | +10.0 ms | 1.02× | ≤ 1.2× | PASS |",
		"| kept | 3.0 ms | 2.0 ms | 4.0 ms | 3.0 ms | +1.0 ms | 1.50× | no goal |  |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "| "+mcpKept+" | 3.0 ms | p50") {
		t.Errorf("the kept MCP row is judged:\n%s", out.String())
	}
}
