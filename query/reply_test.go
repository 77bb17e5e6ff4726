package query

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
)

// ReplyOf answers what writeError writes for the same error, extras included: the MCP tools word
// their errors from it (query/mcp/errors.go).
func TestReplyOfIsWhatWriteErrorAnswers(t *testing.T) {
	for _, c := range []struct {
		err        error
		status     int
		ids        []string
		retryAfter string
	}{
		{invalidParam("from must be a date YYYY-MM-DD"), http.StatusBadRequest, nil, ""},
		{fmt.Errorf("%w: customer %q", reporting.ErrNotFound, "cus_1"), http.StatusNotFound, nil, ""},
		{&reporting.AmbiguousError{Domain: "a.example", CustomerIDs: []string{"cus_1", "cus_2"}}, http.StatusConflict, []string{"cus_1", "cus_2"}, ""},
		{fmt.Errorf("summary: %w", &budget.LimitError{Reason: budget.ErrRateLimited, RetryAfter: 38 * time.Second}), http.StatusTooManyRequests, nil, "38"},
		{errors.New("clickhouse: connection refused"), http.StatusServiceUnavailable, nil, ""},
	} {
		r := ReplyOf(c.err)
		if r.Status != c.status || r.Code == "" || !slices.Equal(r.CustomerIDs, c.ids) || r.RetryAfter != c.retryAfter {
			t.Errorf("ReplyOf(%v) = %+v, want status %d, customer IDs %v, Retry-After %q", c.err, r, c.status, c.ids, c.retryAfter)
		}
	}
	if r := ReplyOf(invalidParam("from must be a date YYYY-MM-DD")); r.Message != "invalid parameter: from must be a date YYYY-MM-DD" {
		t.Errorf("the message of a 400: %q", r.Message)
	}
}
