package query

import (
	"errors"
	"strconv"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/query/budget"
)

// ErrorReply is what this edge answers for an error: the status, the {error, message} body and its
// extras. Callers that answer in another form than HTTP use it to word their failures: the MCP tools
// name the status, code and message of the REST reply in their tool errors (docs/MCP.md, "Errors").
type ErrorReply struct {
	Status  int
	Code    string // the body's "error"
	Message string // the body's "message"
	// CustomerIDs are the matching customers of a 409 ambiguous_customer.
	CustomerIDs []string
	// RetryAfter is the Retry-After header, in seconds ("" without one).
	RetryAfter string
}

// ReplyOf is the reply writeError (api.go) answers for err, read from the same table (toAPIError),
// so the edge keeps one place where errors become statuses, codes and messages whoever asks.
func ReplyOf(err error) ErrorReply {
	ae := toAPIError(err)
	r := ErrorReply{Status: ae.Status(), Code: string(ae.Code), Message: apierror.OneLine(ae.Message)}
	r.CustomerIDs, _ = ae.Fields["customerIds"].([]string)
	var limit *budget.LimitError
	if errors.As(err, &limit) {
		r.RetryAfter = strconv.Itoa(limit.RetryAfterSeconds())
	}
	return r
}
