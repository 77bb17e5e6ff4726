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
// charge a computation (and wait for a computation slot) when they start one. The MCP server's
// in-process requests pass here too, so a tool call costs what its REST requests cost.
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

// reportingContext is the context of a summary, metric or customer-list read. A request with
// `Cache-Control: no-cache` asks for a response from the origin (RFC 9111, 5.2.1.4): it is computed
// from the data instead of reusing a kept one (query/reporting/cache.go), and kept in turn, as long
// as the key has forced recomputations left; beyond them the directive is ignored (NoCacheHeader).
func (a *API) reportingContext(c *gin.Context) (context.Context, error) {
	ctx := c.Request.Context()
	if !noCacheRequested(c.Request.Header) {
		return ctx, nil
	}
	if call, ok := c.Value(callKey).(*budget.Call); ok {
		allowed, err := call.ForceRecompute(ctx)
		if err != nil {
			return ctx, err
		}
		if !allowed {
			c.Header(NoCacheHeader, "ignored")
			return ctx, nil
		}
	}
	return reporting.WithNoCache(ctx), nil
}

// noCacheRequested reports whether the request's Cache-Control directives include no-cache.
func noCacheRequested(h http.Header) bool {
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
