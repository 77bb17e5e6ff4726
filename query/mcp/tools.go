package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/revtrack/revtrack/query/budget"
)

// tools holds what the tool handlers share. One file per tool (tool_*.go) defines its arguments, its
// description for the model and its handler.
type tools struct {
	rest    restClient
	runs    SyncRunReader
	budget  Charger // nil: tool calls cost nothing of their own
	log     *slog.Logger
	metrics *metrics
}

// Charger takes the cost of one tool call from its caller's budget, or refuses it with a
// *budget.LimitError (query/budget.Budget). The REST requests a tool makes are charged by the REST
// API itself.
type Charger interface {
	Charge(ctx context.Context, keyID string) error
}

var _ Charger = (*budget.Budget)(nil)

// charge takes the cost of a tool call of the request's caller.
func (t *tools) charge(ctx context.Context) error {
	if t.budget == nil {
		return nil
	}
	ci, _ := callerFrom(ctx)
	return t.budget.Charge(ctx, ci.caller.Principal.KeyID)
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
	}
}

// Money conventions every tool description ends with, so the model reads each answer right.
const moneyNote = " Money fields end in `Cents` and are integers in minor units of their currency (4900 with USD = 49.00 USD). " +
	"Each currency is reported separately: never add or compare amounts of different currencies."

// newTool builds a read-only tool whose input schema is derived from its argument struct T, and
// its handler: arguments are checked against the schema, decoded into T and given to fn, whose JSON
// is the tool's text content. Any failure becomes a tool error (errors.go), with h adding the tool's
// own advice per REST status. Every tool only reads synced data and changes nothing.
func newTool[T any](t *tools, name, title, description string, h hints, fn func(ctx context.Context, args T) (json.RawMessage, error)) toolDef {
	tool := mcpgo.NewTool(name, mcpgo.WithDescription(description))
	tool.Title = title
	tool.InputSchema = mcpgo.ToolInputSchema{}
	tool.RawInputSchema = inputSchema(new(T))
	tool.Annotations = mcpgo.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcpgo.ToBoolPtr(true),
		DestructiveHint: mcpgo.ToBoolPtr(false),
		IdempotentHint:  mcpgo.ToBoolPtr(true),
		OpenWorldHint:   mcpgo.ToBoolPtr(false),
	}
	v := newArgValidator(name, tool.RawInputSchema)
	call := func(ctx context.Context, req mcpgo.CallToolRequest) (json.RawMessage, error) {
		if err := t.charge(ctx); err != nil {
			return nil, err
		}
		if err := v.validate(req.GetRawArguments()); err != nil {
			return nil, err
		}
		var args T
		if err := req.BindArguments(&args); err != nil {
			return nil, invalidArgs("%v", err)
		}
		return fn(ctx, args)
	}
	return toolDef{tool: tool, handler: func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		start := time.Now()
		out, err := call(ctx, req)
		t.metrics.calls.WithLabelValues(name, outcomeOf(err)).Inc()
		t.metrics.seconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
		if err != nil {
			return t.toolError(name, err, h), nil
		}
		return mcpgo.NewToolResultText(string(out)), nil
	}}
}

// marshal encodes a composed result.
func marshal(v any) (json.RawMessage, error) { return json.Marshal(v) }
