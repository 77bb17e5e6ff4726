package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/query/budget"
)

// errInvalidArgs is an argument a tool refuses before calling REST (a rule of the tool itself, such
// as the number of points of a series).
var errInvalidArgs = errors.New("invalid arguments")

func invalidArgs(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errInvalidArgs, fmt.Sprintf(format, a...))
}

// actionable is a failure whose message already tells the model what to do next; cause is what
// the REST API answered.
type actionable struct {
	msg   string
	cause error
}

func (e *actionable) Error() string { return e.msg }
func (e *actionable) Unwrap() error { return e.cause }

// hints add a tool's own advice to a REST status (e.g. where to find a valid customer ID on 404).
type hints map[int]string

// toolError turns a failure into an MCP tool error (isError: true) whose text tells the model what
// went wrong and what to do next. It is never a JSON-RPC or transport error: the call itself worked.
// Every REST error keeps its status and code in the text, so it can be matched to the REST table.
func (t *tools) toolError(tool string, err error, h hints) *mcpgo.CallToolResult {
	var re *restError
	var act *actionable
	var limit *budget.LimitError
	switch {
	case errors.As(err, &act):
		return mcpgo.NewToolResultError(act.msg)
	case errors.As(err, &limit):
		// The tool call itself was refused (budget.Budget.Charge): the REST API's 429, as text.
		re = &restError{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: limit.Error(),
			RetryAfter: strconv.Itoa(limit.RetryAfterSeconds())}
		return t.restToolError(tool, re, h)
	case errors.As(err, &re):
		return t.restToolError(tool, re, h)
	case errors.Is(err, errInvalidArgs):
		return mcpgo.NewToolResultError(err.Error() + ". Correct the arguments and call " + tool + " again.")
	default:
		t.log.Warn("tool failed", "tool", tool, "err", err)
		return mcpgo.NewToolResultError("Temporary failure reading the reporting data; retry in a few seconds, backing off exponentially.")
	}
}

// restToolError is the tool error of a REST error reply: its message, advice, then its status and
// code.
func (t *tools) restToolError(tool string, re *restError, h hints) *mcpgo.CallToolResult {
	msg := re.Message
	if msg == "" {
		msg = http.StatusText(re.Status)
	}
	var advice string
	switch {
	case re.Status == http.StatusBadRequest:
		advice = "Correct that argument and call " + tool + " again."
	case re.Status == http.StatusUnauthorized:
		advice = "The key is missing, invalid or revoked; reconnect with a valid workspace API key or tracking private key."
	case re.Status == http.StatusForbidden:
		advice = "Retrying will not help until the workspace's subscription is active again."
	case re.Status == http.StatusTooManyRequests:
		wait := re.RetryAfter
		if wait == "" {
			wait = "60"
		}
		advice = "Wait " + wait + " seconds before calling again. The key's budget refills over time; an answer computed before " +
			"(the same question on unchanged data) costs far less than a new one, and a series costs one computation per point and metric."
	case re.Status >= 500 && !strings.Contains(msg, "retry"):
		advice = "This is temporary; retry in a few seconds, backing off exponentially."
	}
	if s, ok := h[re.Status]; ok {
		advice = s
	}
	parts := []string{strings.TrimSuffix(msg, ".") + "."}
	if advice != "" {
		parts = append(parts, advice)
	}
	parts = append(parts, strings.TrimSuffix(fmt.Sprintf("[HTTP %d %s", re.Status, re.Code), " ")+"]")
	return mcpgo.NewToolResultError(strings.Join(parts, " "))
}
