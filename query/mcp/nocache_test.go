package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	querymcp "github.com/revtrack/revtrack/query/mcp"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/query/tracking"
)

// dataReads counts the reporting queries that read data, not the version read on system.parts that
// every summary, metric and list request makes first: a request that read none was answered with a
// kept response. A query made for a recorded read (serviceRead in its context) marks that read.
type dataReads struct {
	reporting.Conn
	n atomic.Int64
}

func (c *dataReads) count(ctx context.Context, q string) {
	if !strings.Contains(q, "system.parts") {
		c.n.Add(1)
		if r, ok := ctx.Value(serviceReadKey{}).(*serviceRead); ok {
			r.computed.Store(true)
		}
	}
}

func (c *dataReads) Query(ctx context.Context, q string, args ...any) (driver.Rows, error) {
	c.count(ctx, q)
	return c.Conn.Query(ctx, q, args...)
}

func (c *dataReads) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	c.count(ctx, q)
	return c.Conn.QueryRow(ctx, q, args...)
}

// serviceRead is one call of the reporting service, by REST or by a tool; computed says whether it
// read data rather than answer a kept response.
type serviceRead struct {
	method   string
	computed atomic.Bool
}

type serviceReadKey struct{}

// recordedReporting is the reporting service with each call recorded in env.
type recordedReporting struct {
	query.Reporting
	env *noCacheEnv
}

func (r recordedReporting) Summary(ctx context.Context, req reporting.Request) (reporting.Summary, error) {
	return r.Reporting.Summary(r.env.record(ctx, "summary"), req)
}

func (r recordedReporting) Metric(ctx context.Context, name string, req reporting.Request) (reporting.MetricResponse, error) {
	return r.Reporting.Metric(r.env.record(ctx, "metric"), name, req)
}

func (r recordedReporting) Customers(ctx context.Context, req reporting.ListRequest) (reporting.CustomerList, error) {
	return r.Reporting.Customers(r.env.record(ctx, "customers"), req)
}

func (r recordedReporting) Customer(ctx context.Context, req reporting.DetailRequest) (reporting.CustomerDetail, error) {
	return r.Reporting.Customer(r.env.record(ctx, "customer"), req)
}

// noCacheEnv is the query edge as `revtrack query` mounts it (the REST routes and the MCP server on
// one engine, reading through one reporting store), over the METRICS 3.7 data set of app-1, with
// every call of the reporting service recorded.
type noCacheEnv struct {
	url, key string
	reads    *dataReads
	mu       sync.Mutex
	calls    []*serviceRead // since the last served()
}

func noCacheSetup(t *testing.T) *noCacheEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	key, _, err := tenant.Store.CreateAPIKey(ctx, "test", "acme", "mcp", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	fx := reportingtest.New(db.Conn, tenant.Source.WorkspaceID)
	reportingtest.Example37(fx, "app-1")
	fx.Flush(t)

	e := &noCacheEnv{key: key, reads: &dataReads{Conn: db.Conn}}
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	reports := recordedReporting{Reporting: reporting.New(e.reads, reporting.WithClock(reportingtest.Clock)), env: e}
	(&query.API{Keys: tenant.Store, Sources: tenant.Store, Tracking: tracking.New(db.Conn), Reporting: reports,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: reportingtest.Clock}).Register(engine)
	querymcp.New(querymcp.Deps{Reporting: reports, Keys: tenant.Store, SyncRuns: querymcp.SyncRuns(db.Conn), Now: reportingtest.Clock}).Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// record adds a call of the reporting service; the queries it makes with the returned context mark it.
func (e *noCacheEnv) record(ctx context.Context, method string) context.Context {
	r := &serviceRead{method: method}
	e.mu.Lock()
	e.calls = append(e.calls, r)
	e.mu.Unlock()
	return context.WithValue(ctx, serviceReadKey{}, r)
}

// served describes the calls of the reporting service since the last call, in order of their start:
// "summary kept", "metric computed", ….
func (e *noCacheEnv) served() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []string{}
	for _, r := range e.calls {
		how := "kept"
		if r.computed.Load() {
			how = "computed"
		}
		out = append(out, r.method+" "+how)
	}
	e.calls = nil
	return out
}

// rest GETs path with the key and, if set, a Cache-Control header; computed says whether the
// response read data.
func (e *noCacheEnv) rest(t *testing.T, path, cacheControl string) (body string, computed bool) {
	t.Helper()
	before := e.reads.n.Load()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	if cacheControl != "" {
		req.Header.Set("Cache-Control", cacheControl)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b), e.reads.n.Load() > before
}

// mcpClient is an MCP client session whose HTTP requests carry the given extra headers.
func (e *noCacheEnv) mcpClient(t *testing.T, headers map[string]string) *client.Client {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + e.key}
	for k, v := range headers {
		h[k] = v
	}
	tr, err := transport.NewStreamableHTTP(e.url+querymcp.Path, transport.WithHTTPHeaders(h))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(testenv.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "revtrack-test", Version: "1.0.0"}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	if _, err := c.Initialize(testenv.Ctx(t), init); err != nil {
		t.Fatal(err)
	}
	return c
}

// call calls a tool and returns its text; computed says whether it read data.
func (e *noCacheEnv) call(t *testing.T, c *client.Client, tool string, args map[string]any) (text string, computed bool) {
	t.Helper()
	before := e.reads.n.Load()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(testenv.Ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, b.String())
	}
	return b.String(), e.reads.n.Load() > before
}

// `Cache-Control: no-cache` on a summary, metric or list request makes the REST API compute the
// response although a kept one is there; the answer is the same, and is kept for the next request.
func TestRESTNoCache(t *testing.T) {
	e := noCacheSetup(t)
	for _, path := range []string{"/api/v1/summary?appId=app-1", "/api/v1/metrics/mrr?appId=app-1", "/api/v1/customers?limit=2"} {
		first, _ := e.rest(t, path, "")
		kept, computed := e.rest(t, path, "")
		if computed || kept != first {
			t.Fatalf("%s: the second request was not answered with the kept response (computed %v)", path, computed)
		}
		for _, cc := range []string{"no-cache", "max-age=0, No-Cache"} {
			fresh, computed := e.rest(t, path, cc)
			if !computed {
				t.Errorf("%s with Cache-Control %q: answered with the kept response", path, cc)
			}
			if fresh != kept {
				t.Errorf("%s with Cache-Control %q: computed\n%s\nkept\n%s", path, cc, fresh, kept)
			}
		}
		if _, computed := e.rest(t, path, "max-age=0"); computed {
			t.Errorf("%s with Cache-Control max-age=0: computed; only no-cache asks for that", path)
		}
		if _, computed := e.rest(t, path, ""); computed {
			t.Errorf("%s: the response the no-cache request computed was not kept", path)
		}
	}
}

// An MCP request with `Cache-Control: no-cache` applies it to every reporting read of the tool
// call (each one, when a tool makes several), so get_summary is computed as the REST summary would
// be; without it, the reads are answered with kept responses.
func TestMCPForwardsNoCache(t *testing.T) {
	e := noCacheSetup(t)
	args := map[string]any{"appId": "app-1"}
	rest, _ := e.rest(t, "/api/v1/summary?appId=app-1", "")

	plain := e.mcpClient(t, nil)
	e.served()
	text, computed := e.call(t, plain, "get_summary", args)
	if computed || text != rest {
		t.Fatalf("get_summary without a header: computed %v, answer equal to REST %v", computed, text == rest)
	}
	if got := e.served(); !slices.Equal(got, []string{"summary kept"}) {
		t.Errorf("reads of get_summary without a header: %q", got)
	}

	fresh := e.mcpClient(t, map[string]string{"Cache-Control": "no-cache"})
	e.served()
	text, computed = e.call(t, fresh, "get_summary", args)
	if !computed {
		t.Error("get_summary with no-cache was answered with the kept response")
	}
	if text != rest {
		t.Errorf("get_summary with no-cache:\n%s\nREST summary:\n%s", text, rest)
	}
	if got := e.served(); !slices.Equal(got, []string{"summary computed"}) {
		t.Errorf("reads of get_summary with no-cache: %q, want the summary computed", got)
	}

	// query_metrics reads one metric at a time, concurrently. Once the plain session has them kept,
	// no-cache computes each of them again.
	metrics := map[string]any{"appId": "app-1", "metrics": []string{"mrr", "usage", "arr"}}
	e.call(t, plain, "query_metrics", metrics)
	e.served()
	if _, computed := e.call(t, plain, "query_metrics", metrics); computed {
		t.Fatal("query_metrics without a header, a second time: computed")
	}
	if got := e.served(); !slices.Equal(got, []string{"metric kept", "metric kept", "metric kept"}) {
		t.Fatalf("reads of query_metrics without a header, a second time: %q", got)
	}
	if _, computed := e.call(t, fresh, "query_metrics", metrics); !computed {
		t.Error("query_metrics with no-cache was answered with kept responses")
	}
	if got := e.served(); !slices.Equal(got, []string{"metric computed", "metric computed", "metric computed"}) {
		t.Errorf("reads of query_metrics with no-cache: %q, want each metric computed", got)
	}

	// The other session is unaffected: its summary is the kept one (the no-cache call kept it).
	if _, computed := e.call(t, plain, "get_summary", args); computed {
		t.Error("get_summary without a header after a no-cache call: computed")
	}
}
