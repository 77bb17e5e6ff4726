package query

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
)

// NoCacheHeader is set to "ignored" on a response whose `Cache-Control: no-cache` was not followed
// because the key's forced recomputations are spent: the response is a kept one, still current.
const NoCacheHeader = "Revtrack-No-Cache"

const callKey = "revtrack.budget-call"

// admit applies the cost limits to every /api/v1 request (query/budget, docs/API.md "Limits"): it
// takes the cost of a kept response from the key's budget, or answers 429, and lets the stores
// charge a computation (and wait for a computation slot) when they start one. The MCP tools admit
// each read they make the same way (query/mcp/service.go), so a tool call costs what its REST twins
// cost.
func (a *API) admit(c *gin.Context) {
	if a.Budget == nil {
		c.Next()
		return
	}
	call, err := a.Budget.Admit(c.Request.Context(), authn.From(c).Principal.KeyID)
	if err != nil {
		a.fail(c, err)
		return
	}
	defer call.Done()
	c.Set(callKey, call)
	c.Request = c.Request.WithContext(budget.WithCall(c.Request.Context(), call))
	c.Next()
}

// reportingContext is the context of a summary, metric or customer-list read (NoCacheContext).
func (a *API) reportingContext(c *gin.Context) (context.Context, error) {
	ctx := c.Request.Context()
	if !NoCacheRequested(c.Request.Header) {
		return ctx, nil
	}
	call, _ := c.Value(callKey).(*budget.Call)
	ctx, ignored, err := NoCacheContext(ctx, call)
	if ignored {
		c.Header(NoCacheHeader, "ignored")
	}
	return ctx, err
}

// NoCacheContext is the context of a summary, metric or customer-list read whose request carries
// `Cache-Control: no-cache`, a request for a response from the origin (RFC 9111, 5.2.1.4): it is
// computed from the data instead of reusing a kept one (query/reporting/cache.go), and kept in turn,
// as long as the key has forced recomputations left (call nil: no budget applies). Beyond them the
// directive is ignored: ctx comes back unchanged with ignored true (REST then sets NoCacheHeader).
// The MCP tools' reads go through it too.
func NoCacheContext(ctx context.Context, call *budget.Call) (_ context.Context, ignored bool, _ error) {
	if call != nil {
		allowed, err := call.ForceRecompute(ctx)
		if err != nil {
			return ctx, false, err
		}
		if !allowed {
			return ctx, true, nil
		}
	}
	return reporting.WithNoCache(ctx), false, nil
}

// NoCacheRequested reports whether the request's Cache-Control directives include no-cache.
func NoCacheRequested(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(d, "=")
			if strings.EqualFold(strings.TrimSpace(name), "no-cache") {
				return true
			}
		}
	}
	return false
}
