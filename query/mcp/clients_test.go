package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/internal/testenv"
)

// goClient connects mcp-go's own client with a bearer key. protocol "" lets it negotiate (the
// stateless 2026-07-28 protocol with this server); an older version pins the initialize handshake.
func goClient(t *testing.T, url, key, protocol string) (*client.Client, *mcp.InitializeResult, error) {
	t.Helper()
	var hdr map[string]string
	if key != "" {
		hdr = map[string]string{"Authorization": "Bearer " + key}
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(hdr))
	if err != nil {
		t.Fatal(err)
	}
	var opts []client.ClientOption
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { _ = c.Close() })
	ctx := testenv.Ctx(t)
	if err := c.Start(ctx); err != nil {
		return c, nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "revtrack-test", Version: "1.0.0"}
	req.Params.ProtocolVersion = protocol
	res, err := c.Initialize(ctx, req)
	return c, res, err
}

// callResult is a tool call's outcome as the tests compare it.
type callResult struct {
	IsError bool
	Text    string
}

// callGo calls a tool with mcp-go's client; a protocol error fails the test, because every tool
// failure must come back as a tool error.
func callGo(t *testing.T, c *client.Client, name string, args map[string]any) callResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(testenv.Ctx(t), req)
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v (tool failures must be tool errors)", name, args, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return callResult{IsError: res.IsError, Text: b.String()}
}

// tsCall is one call of the TypeScript client's plan.
type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// tsOutput is what clienttest/client.mjs prints.
type tsOutput struct {
	Connected bool `json:"connected"`
	Error     *struct {
		Name    string `json:"name"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ServerVersion   mcp.Implementation `json:"serverVersion"`
	ProtocolVersion string             `json:"protocolVersion"`
	SessionID       string             `json:"sessionId"`
	Instructions    string             `json:"instructions"`
	Tools           []json.RawMessage  `json:"tools"`
	Results         []struct {
		Name          string          `json:"name"`
		IsError       bool            `json:"isError"`
		Text          string          `json:"text"`
		ProtocolError json.RawMessage `json:"protocolError"`
	} `json:"results"`
}

// unauthorized says whether the TypeScript client's connection was refused with HTTP 401.
func (o tsOutput) unauthorized() bool {
	return !o.Connected && o.Error != nil && fmt.Sprint(o.Error.Code) == "401" && strings.Contains(o.Error.Message, "unauthorized")
}

// runTS runs the official TypeScript SDK client (clienttest/) against url with key ("" for none).
func runTS(t *testing.T, url, key string, calls []tsCall) tsOutput {
	t.Helper()
	dir, _ := filepath.Abs("clienttest")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript SDK is missing: run `make test` (it runs npm ci in %s)", dir)
	}
	plan := map[string]any{"url": url, "calls": calls}
	if key != "" {
		plan["key"] = key
	}
	in, _ := json.Marshal(plan)
	cmd := exec.Command("node", "client.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	var res tsOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("client.mjs output %q: %v\n%s", out, err, stderr.String())
	}
	for _, r := range res.Results {
		if r.ProtocolError != nil {
			t.Errorf("TypeScript client: %s: protocol error %s (tool failures must be tool errors)", r.Name, r.ProtocolError)
		}
	}
	return res
}

// rawToolsList fetches tools/list over plain HTTP with the initialize handshake (protocol
// 2025-06-18), returning the result exactly as it went over the wire.
func rawToolsList(t *testing.T, url, key string) json.RawMessage {
	t.Helper()
	post := func(session, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, b := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if resp, b = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", resp.StatusCode, b)
	}
	resp, b = post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("tools/list: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var rpc struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &rpc); err != nil {
		t.Fatal(err)
	}
	return rpc.Result
}

// indent formats JSON for golden files and diffs, keeping the key order it came with.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// ctx is the test's context.
func ctx(t *testing.T) context.Context { return testenv.Ctx(t) }
