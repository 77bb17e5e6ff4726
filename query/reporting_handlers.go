package query

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// The reporting routes (docs/API.md, "What it covers"; definitions in docs/METRICS.md). Each
// handler validates every parameter before reading, so a bad request is a 400 whatever the data. The
// parsers (reporting_params.go) are the MCP tools' too.

// reportingRoute answers a reporting route: parse every parameter (a 400 before any read), honour
// Cache-Control: no-cache within the key's budget, compute, answer 200 with the body.
func reportingRoute[R, O any](a *API, c *gin.Context, parse func(url.Values, controlplane.Workspace, time.Time) (R, error),
	compute func(context.Context, R) (O, error)) {
	req, err := parse(c.Request.URL.Query(), authn.From(c).Workspace, a.Now())
	if err != nil {
		a.fail(c, err)
		return
	}
	ctx, err := a.reportingContext(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	out, err := compute(ctx, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (a *API) summary(c *gin.Context) { reportingRoute(a, c, ReportingRequest, a.Reporting.Summary) }

func (a *API) metric(c *gin.Context) {
	name := c.Param("metric")
	req, err := ReportingRequest(c.Request.URL.Query(), authn.From(c).Workspace, a.Now())
	if err != nil {
		a.fail(c, err)
		return
	}
	ctx, err := a.reportingContext(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	if c.Request.URL.Query().Get("interval") != "" { // a series (series_handlers.go); empty is absent (docs/API.md)
		a.metricSeries(c, ctx, name, req)
		return
	}
	out, err := a.Reporting.Metric(ctx, name, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (a *API) customers(c *gin.Context) {
	reportingRoute(a, c, CustomersRequest, a.Reporting.Customers)
}

func (a *API) customer(c *gin.Context) {
	req, err := CustomerRequest(c.Param("customerId"), c.Request.URL.Query(), authn.From(c).Workspace, a.Now())
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
