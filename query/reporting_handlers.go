package query

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/query/reporting"
)

// The reporting routes (specification: Endpoints/Reporting; definitions in docs/METRICS.md). Each
// handler validates every parameter before reading, so a bad request is a 400 whatever the data.

// reportingContext is the context of a summary, metric or customer-list read. A request with
// `Cache-Control: no-cache` asks for a response from the origin (RFC 9111, 5.2.1.4): it is computed
// from the data instead of reusing a kept one (query/reporting/cache.go), and kept in turn.
func reportingContext(c *gin.Context) context.Context {
	ctx := c.Request.Context()
	if noCacheRequested(c.Request.Header) {
		ctx = reporting.WithNoCache(ctx)
	}
	return ctx
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

// reportingRequest reads the parameters of the summary and the metrics.
func (a *API) reportingRequest(c *gin.Context) (reporting.Request, error) {
	var req reporting.Request
	var err error
	if req.Range, err = reportingRange(c, a.Now()); err != nil {
		return req, err
	}
	if req.Scope, req.AppID, err = coveredApps(c); err != nil {
		return req, err
	}
	if req.Currency, err = currencyParam(c); err != nil {
		return req, err
	}
	req.CustomerScope, err = customerScopeParam(c)
	return req, err
}

func (a *API) summary(c *gin.Context) {
	req, err := a.reportingRequest(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	out, err := a.Reporting.Summary(reportingContext(c), req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (a *API) metric(c *gin.Context) {
	name := c.Param("metric")
	req, err := a.reportingRequest(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	out, err := a.Reporting.Metric(reportingContext(c), name, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (a *API) customers(c *gin.Context) {
	var req reporting.ListRequest
	var err error
	req.Range, err = reportingRange(c, a.Now())
	if err == nil {
		req.Scope, _, err = coveredApps(c)
	}
	if err == nil {
		req.CustomerScope, err = customerScopeParam(c)
	}
	if err == nil {
		req.Limit, err = parseLimit(c, reporting.DefaultCustomerLimit, reporting.MaxCustomerLimit)
	}
	if err == nil {
		err = notApplied(c, "currency", "each customer carries its figures in every currency")
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	req.Cursor = c.Query("cursor")
	out, err := a.Reporting.Customers(reportingContext(c), req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (a *API) customer(c *gin.Context) {
	req := reporting.DetailRequest{Ref: c.Param("customerId")}
	var err error
	req.Range, err = reportingRange(c, a.Now())
	if err == nil {
		req.Scope, _, err = coveredApps(c)
	}
	if err == nil {
		req.TimelineLimit, err = parseLimit(c, reporting.DefaultTimelineLimit, reporting.MaxTimelineLimit)
	}
	if err == nil {
		err = notApplied(c, "currency", "the analytics carry every currency of the customer")
	}
	if err == nil {
		err = notApplied(c, "customerScope", "a customer is answered whether or not it is excluded (reportExcluded says which)")
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	out, err := a.Reporting.Customer(c.Request.Context(), req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
