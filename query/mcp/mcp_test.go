package mcp_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	querymcp "github.com/revtrack/revtrack/query/mcp"
)

var toolNames = []string{"compare_periods", "get_attribution", "get_cohorts", "get_customer", "get_mrr_movements", "get_report", "get_summary",
	"list_customers", "list_mrr_movement_customers", "list_sync_runs", "query_metrics"}

// TestMCP runs real MCP clients this project did not write — mcp-go's client in both protocol eras
// and the official TypeScript SDK — against `revtrack all` on the test stack, with platform data
// loaded through the real sync.
func TestMCP(t *testing.T) {
	st := startStack(t)

	t.Run("initialize in both protocol eras", func(t *testing.T) {
		for _, protocol := range []string{"", mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618} {
			c, res, err := goClient(t, st.mcpURL(), st.apiKey, protocol)
			if err != nil {
				t.Fatalf("protocol %q: %v", protocol, err)
			}
			want := protocol
			if want == "" {
				want = mcp.ProtocolVersion20260728
			}
			if res.ProtocolVersion != want || res.ServerInfo.Name != querymcp.ServerName || res.ServerInfo.Version != querymcp.ServerVersion ||
				res.Capabilities.Tools == nil || !strings.Contains(res.Instructions, "Cents") {
				t.Errorf("protocol %q: initialize result %+v", protocol, res)
			}
			if got := c.ProtocolVersion(); got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
		}
	})

	t.Run("tools/list is the golden contract", func(t *testing.T) {
		raw := rawToolsList(t, st.mcpURL(), st.apiKey)
		testenv.Golden(t, "testdata/tools_list.golden.json", indent(t, raw))

		var list struct{ Tools []mcp.Tool }
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			a := tool.Annotations
			if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || tool.Description == "" {
				t.Errorf("%s: every tool is read-only, non-destructive and described: %+v", tool.Name, a)
			}
		}
		if !slices.Equal(names, toolNames) {
			t.Errorf("tools %v, want %v", names, toolNames)
		}
		// The stateless protocol era lists the same tools.
		c, _, err := goClient(t, st.mcpURL(), st.apiKey, "")
		if err != nil {
			t.Fatal(err)
		}
		modern, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(modern.Tools) != len(list.Tools) {
			t.Errorf("modern tools/list has %d tools, legacy %d", len(modern.Tools), len(list.Tools))
		}
		for i, tool := range modern.Tools {
			a, _ := json.Marshal(tool)
			b, _ := json.Marshal(list.Tools[i])
			if string(a) != string(b) {
				t.Errorf("tool %s differs between protocol eras:\n%s\n%s", tool.Name, a, b)
			}
		}
	})

	t.Run("a missing or bad key is refused before any tool runs", func(t *testing.T) {
		for _, key := range []string{"", "revtrack_sk_0000", "tracker_sk_0000", "not-a-key"} {
			req, _ := http.NewRequest(http.MethodPost, st.mcpURL(), strings.NewReader(
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_summary","arguments":{}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Error, Message string }
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || body.Error != "unauthorized" || !strings.Contains(body.Message, "Bearer") ||
				resp.Header.Get("WWW-Authenticate") == "" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("key %q: %d %+v %v", key, resp.StatusCode, body, resp.Header)
			}
			if _, _, err := goClient(t, st.mcpURL(), key, ""); !errors.Is(err, transport.ErrAuthorizationRequired) {
				t.Errorf("mcp-go client with key %q: %v, want a 401", key, err)
			}
		}
		ts := runTS(t, st.mcpURL(), "", nil)
		if !ts.unauthorized() {
			t.Errorf("TypeScript client without a key: %+v", ts.Error)
		}
	})

	t.Run("a revoked key stops working at once", func(t *testing.T) {
		key, k, err := st.store.CreateAPIKey(ctx(t), "test", "acme", "to-revoke", controlplane.ScopeRead)
		if err != nil {
			t.Fatal(err)
		}
		// Sessions of both protocol eras, open and working before the key is revoked.
		var open []*client.Client
		for _, protocol := range []string{"", mcp.ProtocolVersion20251125} {
			c, _, err := goClient(t, st.mcpURL(), key, protocol)
			if err != nil {
				t.Fatal(err)
			}
			if r := callGo(t, c, "list_sync_runs", nil); r.IsError {
				t.Fatalf("before revocation: %s", r.Text)
			}
			open = append(open, c)
		}
		if _, err := st.store.RevokeAPIKey(ctx(t), "test", k.ID); err != nil {
			t.Fatal(err)
		}
		for i, c := range open {
			req := mcp.CallToolRequest{}
			req.Params.Name = "list_sync_runs"
			if _, err := c.CallTool(ctx(t), req); !errors.Is(err, transport.ErrAuthorizationRequired) {
				t.Errorf("session %d: a call after revocation: %v, want a 401", i, err)
			}
		}
		if ts := runTS(t, st.mcpURL(), key, nil); !ts.unauthorized() {
			t.Errorf("TypeScript client with a revoked key: %+v", ts.Error)
		}
	})

	t.Run("list_sync_runs", func(t *testing.T) { testListSyncRuns(t, st) })
	t.Run("bad arguments are tool errors", func(t *testing.T) { testBadArguments(t, st) })
	t.Run("every tool answers what REST answers", func(t *testing.T) { testEquality(t, st) })
	t.Run("the demo data's movements reconcile", func(t *testing.T) { testDemoMovements(t, st) })

	t.Run("a workspace without an active subscription is refused with 403", func(t *testing.T) {
		if _, err := st.store.SetSubscriptionStatus(ctx(t), "test", "acme", controlplane.StatusCanceled); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := st.store.SetSubscriptionStatus(ctx(t), "test", "acme", controlplane.StatusActive); err != nil {
				t.Fatal(err)
			}
		}()
		req, _ := http.NewRequest(http.MethodPost, st.mcpURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+st.apiKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || body.Error != "subscription_inactive" {
			t.Errorf("%d %+v", resp.StatusCode, body)
		}
	})

	t.Run("tool calls are counted by outcome", func(t *testing.T) {
		resp, err := http.Get(st.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{
			`revtrack_mcp_tool_calls_total{outcome="ok",tool="get_summary"}`,
			`revtrack_mcp_tool_calls_total{outcome="invalid_argument",tool="query_metrics"}`,
			`revtrack_mcp_tool_calls_total{outcome="ambiguous_customer",tool="get_customer"}`,
			`revtrack_mcp_tool_calls_total{outcome="not_found",tool="get_customer"}`,
			`revtrack_mcp_tool_call_seconds_count{tool="compare_periods"}`,
		} {
			if !strings.Contains(string(b), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

func testListSyncRuns(t *testing.T, st stack) {
	apps := []string{st.dataset.Apps[0].ID, st.dataset.Apps[1].ID}
	for _, key := range []string{st.apiKey, st.trackerKey} {
		c, _, err := goClient(t, st.mcpURL(), key, "")
		if err != nil {
			t.Fatal(err)
		}
		r := callGo(t, c, "list_sync_runs", nil)
		var got querymcp.ListSyncRunsResult
		if err := json.Unmarshal([]byte(r.Text), &got); err != nil || r.IsError {
			t.Fatalf("%v %s", err, r.Text)
		}
		// Per synced app an initial load and a run that found nothing new; one failed run of app-1.
		if len(got.Runs) != 5 || got.Source != "sync_runs" {
			t.Fatalf("runs: %s", r.Text)
		}
		loaded := map[string]uint64{}
		for i, run := range got.Runs {
			if i > 0 && run.StartedAt.After(got.Runs[i-1].StartedAt) {
				t.Errorf("runs not newest first: %s", r.Text)
			}
			if run.AppID == "app-1" {
				if run.Status != "failed" || !strings.Contains(run.Error, "not found") || run.FinishedAt == nil {
					t.Errorf("app-1's run: %+v", run)
				}
				continue
			}
			if run.Status != "succeeded" || run.Trigger != "manual" || run.FinishedAt == nil || run.Error != "" ||
				run.CoverageThrough == nil || !slices.Contains(apps, run.AppID) {
				t.Errorf("run %d: %+v", i, run)
			}
			loaded[run.AppID] += run.TransactionsCount
		}
		if loaded[apps[0]] == 0 || loaded[apps[1]] == 0 {
			t.Errorf("transactions loaded per app: %v", loaded)
		}

		r = callGo(t, c, "list_sync_runs", map[string]any{"appId": apps[1], "limit": 5})
		if err := json.Unmarshal([]byte(r.Text), &got); err != nil || len(got.Runs) != 2 || got.Runs[0].AppID != apps[1] || got.Runs[1].AppID != apps[1] {
			t.Errorf("appId filter: %s", r.Text)
		}
		r = callGo(t, c, "list_sync_runs", map[string]any{"status": "failed"})
		if err := json.Unmarshal([]byte(r.Text), &got); err != nil || len(got.Runs) != 1 || got.Runs[0].AppID != "app-1" {
			t.Errorf("status filter: %s", r.Text)
		}
		r = callGo(t, c, "list_sync_runs", map[string]any{"limit": 1})
		if err := json.Unmarshal([]byte(r.Text), &got); err != nil || len(got.Runs) != 1 {
			t.Errorf("limit: %s", r.Text)
		}
		if r = callGo(t, c, "list_sync_runs", map[string]any{"appId": "gid://partners/App/999"}); !r.IsError ||
			!strings.Contains(r.Text, "not one of the workspace's selected apps") {
			t.Errorf("unselected app: %+v", r)
		}
	}
}

func testBadArguments(t *testing.T, st stack) {
	c, _, err := goClient(t, st.mcpURL(), st.apiKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args map[string]any
		want string // in the message
	}{
		{"get_summary", map[string]any{"form": "2026-01-01"}, "form"},
		{"get_summary", map[string]any{"from": "January"}, "from"},
		{"get_summary", map[string]any{"customerScope": "everyone"}, "customerScope"},
		{"get_report", map[string]any{}, "report"},
		{"get_report", map[string]any{"report": "mrr"}, "report"},
		{"query_metrics", map[string]any{"metrics": []string{}}, "metrics"},
		{"query_metrics", map[string]any{"metrics": []string{"profit"}}, "metrics"},
		{"query_metrics", map[string]any{"metrics": []string{"mrr", "mrr"}}, "metrics"},
		{"query_metrics", map[string]any{"metrics": []string{"mrr"}, "interval": "hour"}, "interval"},
		{"query_metrics", map[string]any{"metrics": []string{"mrr", "arr"}, "interval": "day", "from": "2025-01-01", "to": "2026-03-31"},
			"coarser interval"},
		{"compare_periods", map[string]any{"previous": map[string]any{"from": "2026-01-01"}}, "both from and to"},
		{"get_customer", map[string]any{}, "customerId"},
		{"get_customer", map[string]any{"customerId": "x", "limit": 51}, "limit"},
		{"list_sync_runs", map[string]any{"limit": 0}, "limit"},
		{"list_sync_runs", map[string]any{"status": "done"}, "status"},
		{"get_attribution", map[string]any{}, "groupBy"},
		{"get_attribution", map[string]any{"groupBy": "utm_source", "customerScope": "all"}, "customerScope"},
		{"get_mrr_movements", map[string]any{"interval": "year"}, "interval"},
		{"list_mrr_movement_customers", map[string]any{"type": "churn"}, "period"},
	}
	for _, tc := range cases {
		r := callGo(t, c, tc.tool, tc.args)
		t.Logf("%s(%v): %s", tc.tool, tc.args, r.Text)
		if !r.IsError || !strings.Contains(r.Text, tc.want) {
			t.Errorf("%s(%v): %+v, want a tool error naming %q", tc.tool, tc.args, r, tc.want)
		}
	}
}
