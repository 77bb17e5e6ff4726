package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/budget"
)

// errInvalidArgs is an argument a tool refuses itself, before the query service sees it (a rule of
// the tool, such as the number of points of a series).
var errInvalidArgs = errors.New("invalid arguments")

func invalidArgs(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errInvalidArgs, fmt.Sprintf(format, a...))
}

// actionable is a failure whose message already tells the model what to do next; cause is the
// query service's failure.
type actionable struct {
	msg   string
	cause error
}

func (e *actionable) Error() string { return e.msg }
func (e *actionable) Unwrap() error { return e.cause }

// hints add a tool's own advice to a REST status (e.g. where to find a valid customer ID on 404).
type hints map[int]string

// failure turns a failure into an MCP tool error (isError: true) whose text tells the model what
// went wrong and what to do next, and names its outcome for the metrics. It is never a JSON-RPC or
// transport error: the call itself worked. A failure of the query service is worded from the reply
// REST gives for it (query.ReplyOf) and keeps its status and code in the text, so it can be matched
// to the REST table.
func (t *tools) failure(tool string, err error, h hints) (*mcpgo.CallToolResult, string) {
	var qe *queryError
	var act *actionable
	var limit *budget.LimitError
	switch {
	case errors.Is(err, errInvalidArgs):
		return mcpgo.NewToolResultError(err.Error() + ". Correct the arguments and call " + tool + " again."), outcomeInvalidArgument
	case errors.As(err, &qe):
		r := query.ReplyOf(err)
		if r.Status >= http.StatusInternalServerError && !errors.As(err, &limit) {
			t.log.Warn("tool failed", "tool", tool, "err", err)
		}
		if errors.As(err, &act) {
			return mcpgo.NewToolResultError(act.msg), outcomeOf(r.Status)
		}
		return replyToolError(tool, r, h), outcomeOf(r.Status)
	default:
		t.log.Warn("tool failed", "tool", tool, "err", err)
		return mcpgo.NewToolResultError("Temporary failure reading the reporting data; retry in a few seconds, backing off exponentially."),
			outcomeUnavailable
	}
}

// replyToolError is the tool error of a REST error reply: its message, advice, then its status and
// code.
func replyToolError(tool string, r query.ErrorReply, h hints) *mcpgo.CallToolResult {
	msg := r.Message
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	var advice string
	switch {
	case r.Status == http.StatusBadRequest:
		advice = "Correct that argument and call " + tool + " again."
	case r.Status == http.StatusUnauthorized:
		advice = "The key is missing, invalid or revoked; reconnect with a valid workspace API key or tracking private key."
	case r.Status == http.StatusForbidden:
		advice = "Retrying will not help until the workspace's subscription is active again."
	case r.Status == http.StatusTooManyRequests:
		wait := r.RetryAfter
		if wait == "" {
			wait = "60"
		}
		advice = "Wait " + wait + " seconds before calling again. The key's budget refills over time; an answer computed before " +
			"(the same question on unchanged data) costs far less than a new one; a series is one computation, never kept."
	case r.Status >= 500 && !strings.Contains(msg, "retry"):
		advice = "This is temporary; retry in a few seconds, backing off exponentially."
	}
	if s, ok := h[r.Status]; ok {
		advice = s
	}
	parts := []string{strings.TrimSuffix(msg, ".") + "."}
	if advice != "" {
		parts = append(parts, advice)
	}
	parts = append(parts, strings.TrimSuffix(fmt.Sprintf("[HTTP %d %s", r.Status, r.Code), " ")+"]")
	return mcpgo.NewToolResultError(strings.Join(parts, " "))
}
