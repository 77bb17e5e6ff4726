package query

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane/authn"
)

// The reporting routes (docs/API.md, "What it covers"; definitions in docs/METRICS.md). Each
// handler validates every parameter before reading, so a bad request is a 400 whatever the data. The
// parsers (reporting_params.go) are the MCP tools' too.

func (a *API) summary(c *gin.Context) {
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
	out, err := a.Reporting.Summary(ctx, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

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
	req, err := CustomersRequest(c.Request.URL.Query(), authn.From(c).Workspace, a.Now())
	if err != nil {
		a.fail(c, err)
		return
	}
	ctx, err := a.reportingContext(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	out, err := a.Reporting.Customers(ctx, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
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
