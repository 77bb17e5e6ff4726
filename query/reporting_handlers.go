package query

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/query/reporting"
)

// The reporting routes (specification: Endpoints/Reporting; definitions in docs/METRICS.md). Each
// handler validates every parameter before reading, so a bad request is a 400 whatever the data.

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
	req, err := a.reportingRequest(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	ctx, err := a.reportingContext(c)
	if err != nil {
		a.fail(c, err)
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
