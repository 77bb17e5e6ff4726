package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/tracking"
)

// ReplyOf answers what writeError writes for the same error, extras included: the MCP tools word
// their errors from it (query/mcp/errors.go).
func TestReplyOfIsWhatWriteErrorAnswers(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, err := range []error{
		invalidParam("from must be a date YYYY-MM-DD"),
		fmt.Errorf("%w: bad dimension", tracking.ErrInvalidFilter),
		fmt.Errorf("%w: customer %q", reporting.ErrNotFound, "cus_1"),
		fmt.Errorf("%w: tracking source %q", errNotFound, "src_1"),
		&reporting.AmbiguousError{Domain: "a.example", CustomerIDs: []string{"cus_1", "cus_2"}},
		fmt.Errorf("summary: %w", &budget.LimitError{Reason: budget.ErrRateLimited, RetryAfter: 38 * time.Second}),
		&budget.LimitError{Reason: budget.ErrOverloaded, RetryAfter: 2 * time.Second},
		controlplane.ErrInvalidKey,
		controlplane.ErrInactiveSubs,
		errors.New("clickhouse: connection refused\nat line 2"),
	} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		writeError(c, err)
		var body struct {
			Error       string   `json:"error"`
			Message     string   `json:"message"`
			CustomerIDs []string `json:"customerIds"`
		}
		if jerr := json.Unmarshal(w.Body.Bytes(), &body); jerr != nil {
			t.Fatalf("%v: %v", err, jerr)
		}
		want := ErrorReply{Status: w.Code, Code: body.Error, Message: body.Message, CustomerIDs: body.CustomerIDs,
			RetryAfter: w.Header().Get("Retry-After")}
		got := ReplyOf(err)
		if got.Status != want.Status || got.Code != want.Code || got.Message != want.Message ||
			!slices.Equal(got.CustomerIDs, want.CustomerIDs) || got.RetryAfter != want.RetryAfter {
			t.Errorf("ReplyOf(%q) = %+v, writeError answers %+v", err, got, want)
		}
	}
}
