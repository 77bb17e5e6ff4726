package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// tools holds what the tool handlers share. One file per tool (tool_*.go) defines its arguments, its
// description for the model and its handler.
type tools struct {
	svc     *service
	runs    SyncRunReader
	log     *slog.Logger
	metrics *metrics
}

// charge takes the cost of a tool call of the request's caller from its budget (budget.Charge),
// beside what each read of the call costs (service.go).
func (t *tools) charge(ctx context.Context) error {
	if t.svc.budget == nil {
		return nil
	}
	ci, err := caller(ctx)
	if err != nil {
		return err
	}
	return t.svc.budget.Charge(ctx, ci.caller.Principal.KeyID)
}

type toolDef struct {
	tool    mcpgo.Tool
	handler mcpserver.ToolHandlerFunc
}

func (t *tools) all() []toolDef {
	return []toolDef{
		t.getSummary(),
		t.getCustomer(),
		t.listCustomers(),
		t.queryMetrics(),
		t.getReport(),
		t.comparePeriods(),
		t.listSyncRuns(),
		t.getAttribution(),
		t.getMRRMovements(),
		t.listMRRMovementCustomers(),
		t.getCohorts(),
	}
}

// Money conventions every tool description ends with, so the model reads each answer right.
const moneyNote = " Money fields end in `Cents` and are integers in minor units of their currency (4900 with USD = 49.00 USD). " +
	"Each currency is reported separately: never add or compare amounts of different currencies."

// newTool builds a read-only tool whose input schema is derived from its argument struct A, and
// its handler: arguments are checked against the schema, decoded into A and given to fn, whose typed
// output R is the tool's text content as JSON, encoded as the REST API encodes its bodies (so a tool
// that answers a REST body answers it byte for byte). Any failure becomes a tool error (errors.go),
// with h adding the tool's own advice per REST status. Every tool only reads synced data and changes
// nothing.
//
// The output is text only, no structuredContent or outputSchema: the results and the tools/list
// contract (testdata/tools_list.golden.json) stay what clients were given.
func newTool[A, R any](t *tools, name, title, description string, h hints, fn func(ctx context.Context, args A) (R, error)) toolDef {
	tool := mcpgo.NewTool(name, mcpgo.WithDescription(description))
	tool.Title = title
	tool.InputSchema = mcpgo.ToolInputSchema{}
	tool.RawInputSchema = inputSchema(new(A))
	tool.Annotations = mcpgo.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcpgo.ToBoolPtr(true),
		DestructiveHint: mcpgo.ToBoolPtr(false),
		IdempotentHint:  mcpgo.ToBoolPtr(true),
		OpenWorldHint:   mcpgo.ToBoolPtr(false),
	}
	v := newArgValidator(name, tool.RawInputSchema)
	call := func(ctx context.Context, req mcpgo.CallToolRequest) ([]byte, error) {
		if err := t.charge(ctx); err != nil {
			return nil, asQueryError(err)
		}
		if err := v.validate(req.GetRawArguments()); err != nil {
			return nil, err
		}
		var args A
		if err := req.BindArguments(&args); err != nil {
			return nil, invalidArgs("%v", err)
		}
		out, err := fn(ctx, args)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	return toolDef{tool: tool, handler: func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		start := time.Now()
		out, err := call(ctx, req)
		outcome := outcomeOK
		var res *mcpgo.CallToolResult
		if err != nil {
			res, outcome = t.failure(name, err, h)
		} else {
			res = mcpgo.NewToolResultText(string(out))
		}
		t.metrics.calls.WithLabelValues(name, outcome).Inc()
		t.metrics.seconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
		return res, nil
	}}
}
