package query

import (
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/reporting"
)

// GET /api/v1/cohorts (docs/METRICS.md 3.15).
func (a *API) cohorts(c *gin.Context) { reportingRoute(a, c, CohortsRequest, a.Reporting.Cohorts) }

// CohortsRequest parses the parameters of GET /api/v1/cohorts: the summary's (from, to, appId,
// currency, customerScope) and by (install, the default, or first_paid).
func CohortsRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.CohortsRequest, error) {
	var req reporting.CohortsRequest
	var err error
	if req.Request, err = ReportingRequest(q, w, now); err != nil {
		return req, err
	}
	switch req.By = q.Get("by"); req.By {
	case "":
		req.By = reporting.CohortByInstall
	case reporting.CohortByInstall, reporting.CohortByFirstPaid:
	default:
		return req, invalidParam("by must be one of install, first_paid")
	}
	return req, nil
}
