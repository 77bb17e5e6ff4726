package main

import (
	"context"
	"errors"
	"net/http"

	querymcp "github.com/revtrack/revtrack/query/mcp"
)

// mcpSummaryName is the MCP row of the report; its goal is relative to the REST summary of the
// same rounds (issue: MCP within 1.2× of REST).
const mcpSummaryName = "MCP get_summary"

// mcpSummary probes get_summary over MCP the way a remote client calls it: one Streamable HTTP
// session (dialled on the first request, the 2025-11-25 handshake most client applications use),
// then one tool call per request, with the same range as the REST summary.
func (a *api) mcpSummary(from, to string) probe {
	args := map[string]any{}
	if from != "" {
		args["from"], args["to"] = from, to
	}
	var c *querymcp.Caller
	return func(ctx context.Context, _ int) outcome {
		if c == nil {
			dialled, err := querymcp.Dial(ctx, a.base, a.key, "2025-11-25")
			if err != nil {
				return outcome{err: err}
			}
			c = dialled
		}
		b, err := c.Call(ctx, "get_summary", args)
		switch {
		case errors.Is(err, querymcp.ErrTool):
			return outcome{status: http.StatusUnprocessableEntity, body: err.Error()}
		case err != nil:
			return outcome{err: err}
		}
		return outcome{status: http.StatusOK, bytes: int64(len(b))}
	}
}
