package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Caller is an MCP client of a revtrack server, for benchmarks and probes that time tool calls the
// way a remote MCP client makes them: one connection (Streamable HTTP, bearer key), then calls.
// bench/query uses it to put get_summary over MCP beside GET /api/v1/summary in the same run.
type Caller struct{ c *client.Client }

// Dial connects to baseURL's MCP endpoint (baseURL + Path) with key and completes the handshake.
// protocol "" negotiates the newest protocol; an older version (e.g. "2025-11-25") pins the
// session-based initialize handshake that most MCP client applications use today.
func Dial(ctx context.Context, baseURL, key, protocol string) (*Caller, error) {
	tr, err := transport.NewStreamableHTTP(strings.TrimSuffix(baseURL, "/")+Path,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}),
		// Never follow a redirect with the bearer key attached (GO-2026-6911: the default client would).
		transport.WithHTTPBasicClient(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}))
	if err != nil {
		return nil, err
	}
	var opts []client.ClientOption
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("mcp start: %w", err)
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "revtrack-caller", Version: ServerVersion}
	req.Params.ProtocolVersion = protocol
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mcp initialize: %w", err)
	}
	return &Caller{c: c}, nil
}

// ErrTool is a call the server answered with a tool error (isError); its text follows.
var ErrTool = errors.New("tool error")

// Call calls a tool and returns its text content (the JSON the tools answer with).
func (c *Caller) Call(ctx context.Context, tool string, args map[string]any) ([]byte, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return nil, fmt.Errorf("%w: %s: %s", ErrTool, tool, b.String())
	}
	return []byte(b.String()), nil
}

// Close ends the client.
func (c *Caller) Close() error { return c.c.Close() }
