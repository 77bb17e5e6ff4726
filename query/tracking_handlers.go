package query

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/tracking"
)

// refusalReader reads what the ingest edge refused for a source (controlplane.Store).
type refusalReader interface {
	SourceRefusals(ctx context.Context, sourceID string) (controlplane.SourceRefusals, error)
}

// sourceParam checks that a source ID names a source of the caller's workspace and of a selected
// app; anything else is 404, so IDs of other workspaces reveal nothing.
func (a *API) sourceParam(c *gin.Context, id string) error {
	if id == "" {
		return nil
	}
	sc := scope(c)
	src, err := a.Sources.SourceByID(c.Request.Context(), sc.WorkspaceID, id)
	if err != nil || !slices.Contains(sc.AppIDs, src.AppID) {
		return fmt.Errorf("%w: tracking source %q", errNotFound, id)
	}
	return nil
}

func (a *API) trackingStatus(c *gin.Context) {
	id := c.Param("id")
	r, err := parseRange(c.Request.URL.Query(), a.Now())
	if err == nil {
		err = a.sourceParam(c, id)
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	st, err := a.Tracking.Troubleshoot(c.Request.Context(), scope(c), id, r.Start())
	if err != nil {
		a.fail(c, err)
		return
	}
	// The edge's refusals of this source (controlplane/refusals.go), when the sources store keeps them.
	if rr, ok := a.Sources.(refusalReader); ok {
		if ref, err := rr.SourceRefusals(c.Request.Context(), id); err == nil {
			st.ApplyRefusals(ref)
		} else {
			a.Log.Warn("tracking source refusals not read", "source", id, "err", err)
		}
	}
	c.JSON(http.StatusOK, st)
}

// TrackingFunnelResponse is the Distribution funnel.
type TrackingFunnelResponse struct {
	Range  Range           `json:"range"`
	Funnel tracking.Funnel `json:"funnel"`
	Source string          `json:"source"`
}

func (a *API) trackingFunnel(c *gin.Context) {
	r, err := parseRange(c.Request.URL.Query(), a.Now())
	if err == nil {
		err = a.sourceParam(c, c.Query("sourceId"))
	}
	var window time.Duration
	if err == nil && c.Query("windowDays") != "" {
		// The whole value is the integer (strconv, as for limit): "7x" or "1.5" is refused, not read as 7 or 1.
		days, serr := strconv.Atoi(c.Query("windowDays"))
		if serr != nil || days < 1 || days > 180 {
			err = invalidParam("windowDays must be an integer from 1 to 180")
		}
		window = time.Duration(days) * 24 * time.Hour
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	f, err := a.Tracking.Funnel(c.Request.Context(), tracking.FunnelFilter{Scope: scope(c), SourceID: c.Query("sourceId"),
		Dimension: c.Query("groupBy"), From: r.Start(), To: r.End(), Window: window})
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, TrackingFunnelResponse{Range: r, Funnel: f, Source: "tracking_funnel"})
}

// TrackingLedgerResponse is the per-tracker_ref ledger of commissionable amounts.
type TrackingLedgerResponse struct {
	Range  Range                `json:"range"`
	Rows   []tracking.LedgerRow `json:"rows"`
	Source string               `json:"source"`
}

func (a *API) trackingLedger(c *gin.Context) {
	r, err := parseRange(c.Request.URL.Query(), a.Now())
	if err != nil {
		a.fail(c, err)
		return
	}
	rows, err := a.Tracking.Ledger(c.Request.Context(), scope(c), r.Start(), r.End())
	if err != nil {
		a.fail(c, err)
		return
	}
	if rows == nil {
		rows = []tracking.LedgerRow{}
	}
	c.JSON(http.StatusOK, TrackingLedgerResponse{Range: r, Rows: rows, Source: "tracking_ledger"})
}
