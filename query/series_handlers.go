package query

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/query/reporting"
)

// metricSeries answers GET /api/v1/metrics/{metric}?interval=day|week|month: the metric at the end
// of every interval of the range (docs/METRICS.md 3.13). The other parameters are the metric's,
// already parsed into req; the store refuses an unknown metric (404), then an interval other than
// day, week or month, a metric without a series, or too many points (400), before reading.
func (a *API) metricSeries(c *gin.Context, ctx context.Context, name string, req reporting.Request) {
	out, err := a.Reporting.Series(ctx, name, c.Request.URL.Query().Get("interval"), req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
