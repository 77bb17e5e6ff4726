package query_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/budget"
	querymcp "github.com/revtrack/revtrack/query/mcp"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/tracking"
)

// limitsEnv is the REST API and the MCP server of one engine, as `revtrack query` mounts them, with
// a budget on the test Redis.
type limitsEnv struct {
	base   string
	store  *controlplane.Store
	tenant pipeline.Tenant
	budget *budget.Budget
}

// startLimits serves the query edge with cfg; its buckets refill one unit a minute and one forced
// recomputation an hour, so a test sees only what it spent.
func startLimits(t *testing.T, cfg budget.Config) limitsEnv {
	t.Helper()
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	cfg.RefillPerMinute, cfg.NoCacheRefillPerHour = 1, 1
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := budget.New(cfg, &budget.RedisBuckets{Client: db.Redis, Prefix: db.RedisC.KeyPrefix}, prometheus.NewRegistry())
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reports := reporting.New(db.Conn)
	(&query.API{Keys: tenant.Store, Sources: tenant.Store, Tracking: tracking.New(db.Conn), Reporting: reports,
		Budget: b, Log: log}).Register(engine)
	querymcp.New(querymcp.Deps{Reporting: reports, Keys: tenant.Store, SyncRuns: querymcp.SyncRuns(db.Conn), Budget: b, Log: log}).Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return limitsEnv{base: srv.URL, store: tenant.Store, tenant: tenant, budget: b}
}

func (e limitsEnv) key(t *testing.T, name string) string {
	t.Helper()
	key, _, err := e.store.CreateAPIKey(testenv.Ctx(t), "test", "acme", name, controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

type reply struct {
	status int
	header http.Header
	Error  string `json:"error"`
	Msg    string `json:"message"`
}

// get calls a REST path with key; noCache adds `Cache-Control: no-cache`.
func (e limitsEnv) get(t *testing.T, path, key string, noCache bool) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodGet, e.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	body, _ := io.ReadAll(resp.Body)
	if r.status != http.StatusOK {
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%s: %d with a body that is not the error object: %s", path, r.status, body)
		}
	}
	return r
}

// mcpStatus posts a get_summary tool call to /api/mcp over plain HTTP and returns the HTTP status
// and error body: what a refused key gets before any MCP message is read.
func (e limitsEnv) mcpStatus(t *testing.T, key string) (int, reply) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodPost, e.base+querymcp.Path, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_summary","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return resp.StatusCode, r
}

// mcpReads checks that key can open an MCP session and read the summary.
func (e limitsEnv) mcpReads(t *testing.T, key, what string) {
	t.Helper()
	c, err := querymcp.Dial(testenv.Ctx(t), e.base, key, "")
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer c.Close()
	if _, err := c.Call(testenv.Ctx(t), "get_summary", map[string]any{}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantRefused checks a refusal's status, code and Retry-After header.
func wantRefused(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != status || r.Error != code || err != nil || secs < 1 || r.Msg == "" {
		t.Fatalf("%s: %d %s %q, Retry-After %q; want %d %s with Retry-After", what, r.status, r.Error, r.Msg, r.header.Get("Retry-After"), status, code)
	}
}

func day(offset int) string { return time.Now().UTC().AddDate(0, 0, offset).Format(time.DateOnly) }

// summaryOf is a summary path whose range no other request of the test used: computed, not kept.
func summaryOf(days int) string { return "/api/v1/summary?from=" + day(-days) + "&to=" + day(0) }

func TestReportingBudgetChargesWorkAndRefusesWith429(t *testing.T) {
	e := startLimits(t, budget.Config{Budget: 25, ComputedCost: 10, NoCacheBudget: 5, MaxConcurrent: 4, ComputeWait: time.Second})
	key := e.key(t, "budget")
	// 25 units: a computed summary (10), the same one kept (1), another computed (10): 4 left.
	for i, path := range []string{summaryOf(10), summaryOf(10), summaryOf(20)} {
		if r := e.get(t, path, key, false); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s %s", i+1, r.status, r.Error, r.Msg)
		}
	}
	// A third computation cannot be paid: refused before it runs.
	wantRefused(t, "a computation beyond the budget", e.get(t, summaryOf(30), key, false), http.StatusTooManyRequests, "rate_limited")
	// What is kept still fits (3 units left, then 2).
	if r := e.get(t, summaryOf(10), key, false); r.status != http.StatusOK {
		t.Fatalf("a kept response within the budget: %d %s", r.status, r.Msg)
	}
	// MCP spends the same budget: the tool call (1) and its summary read (1, kept) take the rest, and
	// the next call is a tool error that says to wait.
	c, err := querymcp.Dial(testenv.Ctx(t), e.base, key, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"from": day(-10), "to": day(0)}
	if _, err := c.Call(testenv.Ctx(t), "get_summary", args); err != nil {
		t.Fatalf("a kept summary over MCP within the budget: %v", err)
	}
	_, err = c.Call(testenv.Ctx(t), "get_summary", args)
	if !errors.Is(err, querymcp.ErrTool) || !strings.Contains(err.Error(), "[HTTP 429 rate_limited]") ||
		!strings.Contains(err.Error(), "budget is spent") || !strings.Contains(err.Error(), "seconds before calling again") {
		t.Fatalf("a tool call beyond the budget: %v", err)
	}
	wantRefused(t, "a kept response beyond the budget", e.get(t, summaryOf(10), key, false), http.StatusTooManyRequests, "rate_limited")
	// Another key of the same workspace has its own budget.
	if r := e.get(t, summaryOf(10), e.key(t, "other"), false); r.status != http.StatusOK {
		t.Fatalf("another key: %d %s", r.status, r.Msg)
	}
}

func TestASeriesIsOneComputationOfTheBudget(t *testing.T) {
	e := startLimits(t, budget.Config{Budget: 50, ComputedCost: 10, NoCacheBudget: 5, MaxConcurrent: 4, ComputeWait: time.Second})
	key := e.key(t, "series")
	c, err := querymcp.Dial(testenv.Ctx(t), e.base, key, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A series of ten daily points of two metrics is one computation (docs/METRICS.md 3.13): the
	// call (1) and its computation (10) whatever its points, never kept. Four fit in 50 units; the
	// fifth is refused before it computes.
	args := map[string]any{"metrics": []string{"mrr", "arr"}, "interval": "day", "from": day(-9), "to": day(0)}
	for i := range 4 {
		if _, err := c.Call(testenv.Ctx(t), "query_metrics", args); err != nil {
			t.Fatalf("series %d within the budget: %v", i+1, err)
		}
	}
	_, err = c.Call(testenv.Ctx(t), "query_metrics", args)
	if !errors.Is(err, querymcp.ErrTool) || !strings.Contains(err.Error(), "[HTTP 429 rate_limited]") ||
		!strings.Contains(err.Error(), "a series is one computation") {
		t.Fatalf("a series beyond the budget: %v", err)
	}
}

func TestForcedRecomputationsBeyondTheAllowanceAreServedKept(t *testing.T) {
	e := startLimits(t, budget.Config{Budget: 25, ComputedCost: 10, NoCacheBudget: 1, MaxConcurrent: 4, ComputeWait: time.Second})
	key := e.key(t, "no-cache")
	path := summaryOf(10)
	// Computed (10 units), then recomputed on request (10): 5 left.
	for i, noCache := range []bool{false, true} {
		if r := e.get(t, path, key, noCache); r.status != http.StatusOK || r.header.Get(query.NoCacheHeader) != "" {
			t.Fatalf("request %d: %d %s, %s %q", i+1, r.status, r.Msg, query.NoCacheHeader, r.header.Get(query.NoCacheHeader))
		}
	}
	// The allowance of one is spent: no-cache is ignored and the kept response served (a computation
	// would need 10 units, more than the 5 left, and be refused).
	r := e.get(t, path, key, true)
	if r.status != http.StatusOK || r.header.Get(query.NoCacheHeader) != "ignored" {
		t.Fatalf("no-cache beyond the allowance: %d %s %s %q", r.status, r.Error, query.NoCacheHeader, r.header.Get(query.NoCacheHeader))
	}
	// Another key may still force one.
	if r := e.get(t, path, e.key(t, "other"), true); r.status != http.StatusOK || r.header.Get(query.NoCacheHeader) != "" {
		t.Fatalf("another key's no-cache: %d %q", r.status, r.header.Get(query.NoCacheHeader))
	}
}

func TestComputationsBeyondTheProcessCapAre503(t *testing.T) {
	e := startLimits(t, budget.Config{Budget: 1000, ComputedCost: 10, NoCacheBudget: 5, MaxConcurrent: 1, ComputeWait: time.Millisecond})
	key := e.key(t, "cap")
	kept := summaryOf(10)
	if r := e.get(t, kept, key, false); r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.Msg)
	}
	// Another request holds the process's one computation slot.
	ctx := testenv.Ctx(t)
	holder, err := e.budget.Admit(ctx, "holder")
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Compute(ctx); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, "a computation while the slots are busy", e.get(t, summaryOf(20), key, false), http.StatusServiceUnavailable, "overloaded")
	wantRefused(t, "a customer detail while the slots are busy", e.get(t, "/api/v1/customers/cus_00000000000000000000", key, false),
		http.StatusServiceUnavailable, "overloaded")
	// A kept response needs no slot.
	if r := e.get(t, kept, key, false); r.status != http.StatusOK {
		t.Fatalf("a kept response while the slots are busy: %d %s", r.status, r.Msg)
	}
	holder.Done()
	if r := e.get(t, summaryOf(20), key, false); r.status != http.StatusOK {
		t.Fatalf("after the slot was freed: %d %s", r.status, r.Msg)
	}
}

func TestTrackingPrivateKeysReadThroughMCPOnly(t *testing.T) {
	e := startLimits(t, budget.DefaultConfig())
	ctx := testenv.Ctx(t)
	src, sk := e.tenant.Source, e.tenant.PrivateKey
	for _, path := range []string{summaryOf(10), "/api/v1/tracking/events", "/api/v1/customers", "/api/v1/metrics/mrr"} {
		r := e.get(t, path, sk, false)
		if r.status != http.StatusForbidden || r.Error != "forbidden" || !strings.Contains(r.Msg, "/api/mcp") {
			t.Fatalf("%s with a private key: %d %s %q", path, r.status, r.Error, r.Msg)
		}
	}
	// Through MCP the same key reads, the reporting tools included (they read as MCP's caller).
	c, err := querymcp.Dial(ctx, e.base, sk, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tool := range []string{"get_summary", "list_customers", "list_sync_runs"} {
		if _, err := c.Call(ctx, tool, map[string]any{}); err != nil {
			t.Fatalf("%s with a private key: %v", tool, err)
		}
	}

	// A rotated-away key reads nothing, in REST or MCP, also inside the open session; the new one
	// reads through MCP.
	_, sk2, err := e.store.RotatePrivateKey(ctx, "test", src.WorkspaceID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.get(t, summaryOf(10), sk, false); r.status != http.StatusUnauthorized {
		t.Fatalf("rotated key on REST: %d %s", r.status, r.Error)
	}
	if status, r := e.mcpStatus(t, sk); status != http.StatusUnauthorized || r.Error != "unauthorized" {
		t.Fatalf("rotated key on MCP: %d %+v", status, r)
	}
	if _, err := c.Call(ctx, "get_summary", map[string]any{}); err == nil {
		t.Fatal("the rotated key's open session still reads")
	}
	e.mcpReads(t, sk2, "new key")

	// A disabled source's key reads nothing either: 401 everywhere, at once.
	if _, err := e.store.SetSourceEnabled(ctx, "test", src.WorkspaceID, src.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{summaryOf(10), "/api/v1/tracking/events"} {
		if r := e.get(t, path, sk2, false); r.status != http.StatusUnauthorized || r.Error != "unauthorized" {
			t.Fatalf("%s with a disabled source's key: %d %s", path, r.status, r.Error)
		}
	}
	if status, r := e.mcpStatus(t, sk2); status != http.StatusUnauthorized || r.Error != "unauthorized" || !strings.Contains(r.Msg, "disabled") {
		t.Fatalf("disabled source's key on MCP: %d %+v", status, r)
	}
	if _, err := e.store.SetSourceEnabled(ctx, "test", src.WorkspaceID, src.ID, true); err != nil {
		t.Fatal(err)
	}
	e.mcpReads(t, sk2, "enabled again")
}
