package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	querymcp "github.com/revtrack/revtrack/query/mcp"
)

// mcpSummaryName starts the names of the MCP rows of the report; each is put beside the REST summary
// of the same rounds (issue: MCP within 1.2× of REST).
const mcpSummaryName = "MCP get_summary"

// mcpProtocol is the protocol the MCP probes pin: the 2025-11-25 session handshake most client
// applications use.
const mcpProtocol = mcpgo.ProtocolVersion20251125

// mcpSummary probes get_summary over MCP the way a remote client calls it: one Streamable HTTP
// session (dialled on the first request), then one tool call per request, with the same range as
// the REST summary. With noCache every HTTP request of the session carries `Cache-Control:
// no-cache`, which the server forwards to the REST summary it calls, so the summary is computed.
func (a *api) mcpSummary(from, to string, noCache bool) probe {
	args := map[string]any{}
	if from != "" {
		args["from"], args["to"] = from, to
	}
	var c *client.Client
	return func(ctx context.Context, _ int) outcome {
		if c == nil {
			dialled, err := dialMCP(ctx, a.base, a.key, noCache)
			if err != nil {
				return outcome{err: err}
			}
			c = dialled
		}
		n, err := callText(ctx, c, "get_summary", args)
		switch {
		case errors.Is(err, querymcp.ErrTool):
			return outcome{status: http.StatusUnprocessableEntity, body: err.Error()}
		case err != nil:
			return outcome{err: err}
		}
		return outcome{status: http.StatusOK, bytes: int64(n)}
	}
}

// dialMCP opens an MCP session on base's endpoint with key, as query/mcp.Dial does, and with
// `Cache-Control: no-cache` on every request when noCache is set.
func dialMCP(ctx context.Context, base, key string, noCache bool) (*client.Client, error) {
	h := map[string]string{"Authorization": "Bearer " + key}
	if noCache {
		h["Cache-Control"] = "no-cache"
	}
	tr, err := transport.NewStreamableHTTP(strings.TrimSuffix(base, "/")+querymcp.Path, transport.WithHTTPHeaders(h),
		// Never follow a redirect with the bearer key attached (GO-2026-6911: the default client would).
		transport.WithHTTPBasicClient(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcpProtocol))
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("mcp start: %w", err)
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "revtrack-bench-query", Version: querymcp.ServerVersion}
	req.Params.ProtocolVersion = mcpProtocol
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mcp initialize: %w", err)
	}
	return c, nil
}

// callText calls a tool and returns the size of its text content; a tool error wraps
// query/mcp.ErrTool.
func callText(ctx context.Context, c *client.Client, tool string, args map[string]any) (int, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return 0, fmt.Errorf("%w: %s: %s", querymcp.ErrTool, tool, b.String())
	}
	return b.Len(), nil
}
