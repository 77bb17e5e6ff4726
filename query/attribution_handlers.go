package query

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/reporting"
)

// GET /api/v1/attribution: revenue by acquisition channel (docs/METRICS.md 10). Every parameter is
// validated before reading, so a bad request is a 400 whatever the data.
func (a *API) attribution(c *gin.Context) {
	reportingRoute(a, c, AttributionRequest, a.Reporting.Attribution)
}

// AttributionRequest parses the parameters of GET /api/v1/attribution for workspace w (groupBy,
// from, to, appId, currency), with now the clock of the default range. customerScope does not
// apply: excluded customers are always left out, as the summary's default leaves them out.
func AttributionRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.AttributionRequest, error) {
	var req reporting.AttributionRequest
	var err error
	req.GroupBy = q.Get("groupBy")
	if !slices.Contains(reporting.AttributionGroups, req.GroupBy) {
		return req, invalidParam("groupBy must be one of %s", strings.Join(reporting.AttributionGroups, ", "))
	}
	if req.Range, err = reportingRange(q, now); err != nil {
		return req, err
	}
	if req.Scope, req.AppID, err = coveredApps(q, w); err != nil {
		return req, err
	}
	if req.Currency, err = currencyParam(q); err != nil {
		return req, err
	}
	err = notApplied(q, "customerScope", "attribution always leaves excluded customers out")
	return req, err
}
