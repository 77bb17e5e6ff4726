package query

import (
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/reporting"
)

// GET /api/v1/mrr-movements and /api/v1/mrr-movements/customers (docs/METRICS.md 3.14).

func (a *API) mrrMovements(c *gin.Context) {
	reportingRoute(a, c, MovementsRequest, a.Reporting.Movements)
}

func (a *API) mrrMovementCustomers(c *gin.Context) {
	reportingRoute(a, c, MovementCustomersRequest, a.Reporting.MovementCustomers)
}

// MovementsRequest parses the parameters of GET /api/v1/mrr-movements: the summary's (from, to,
// appId, currency, customerScope) and interval (day, week or month; default month).
func MovementsRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.MovementsRequest, error) {
	var req reporting.MovementsRequest
	var err error
	if req.Request, err = ReportingRequest(q, w, now); err != nil {
		return req, err
	}
	switch req.Interval = q.Get("interval"); req.Interval {
	case "":
		req.Interval = reporting.IntervalMonth
	case reporting.IntervalDay, reporting.IntervalWeek, reporting.IntervalMonth:
	default:
		return req, invalidParam("interval must be one of day, week, month")
	}
	return req, nil
}

// MovementCustomersRequest parses the parameters of GET /api/v1/mrr-movements/customers: those of
// the movements, type (new, expansion, contraction, churn or reactivation), period (a date of the
// range: its interval is the one listed), limit and cursor as the customer list's.
func MovementCustomersRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.MovementCustomersRequest, error) {
	var req reporting.MovementCustomersRequest
	var err error
	if req.MovementsRequest, err = MovementsRequest(q, w, now); err != nil {
		return req, err
	}
	switch req.Type = q.Get("type"); req.Type {
	case reporting.MoveNew, reporting.MoveExpansion, reporting.MoveContraction, reporting.MoveChurn, reporting.MoveReactivation:
	default:
		return req, invalidParam("type must be one of new, expansion, contraction, churn, reactivation")
	}
	if req.Period, err = reporting.ParseDate(q.Get("period")); err != nil {
		return req, invalidParam("period must be a date YYYY-MM-DD of the range")
	}
	if req.Period.Before(req.Range.From) || req.Period.After(req.Range.To) {
		return req, invalidParam("period must be a date of the range %s … %s", req.Range.From, req.Range.To)
	}
	if req.Limit, err = parseLimit(q, reporting.DefaultCustomerLimit, reporting.MaxCustomerLimit); err != nil {
		return req, err
	}
	req.Cursor = q.Get("cursor")
	return req, nil
}
