package query

import (
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/query/tracking"
)

// The Tracking view's reads (docs/API.md, "Tracking views"): recent events filtered and paged, and
// one acquisition's journey.

// TrackingEventsPage is one page of recent events with their evidence badge.
type TrackingEventsPage struct {
	Range  Range            `json:"range"`
	Events []tracking.Event `json:"events"`
	// NextCursor continues the listing (the cursor parameter); null on the last page.
	NextCursor *string `json:"nextCursor"`
	Source     string  `json:"source"`
}

// textParam reads an optional exact-match filter: at most 200 characters, refused when longer
// (such a value matches nothing anyway, and the bound keeps queries small).
func textParam(c *gin.Context, name string) (string, error) {
	v := c.Query(name)
	if utf8.RuneCountInString(v) > 200 {
		return "", invalidParam("%s must be at most 200 characters", name)
	}
	return v, nil
}

func (a *API) trackingEventsPage(c *gin.Context) {
	q := c.Request.URL.Query()
	f := tracking.Filter{Scope: scope(c), SourceID: c.Query("sourceId"), AcquisitionID: c.Query("acquisitionId")}
	r, err := parseRange(q, a.Now())
	if err == nil {
		err = a.sourceParam(c, f.SourceID)
	}
	if err == nil {
		f.Limit, err = parseLimit(q, tracking.DefaultEventLimit, tracking.MaxEventLimit)
	}
	if err == nil {
		f.Name, err = textParam(c, "name")
	}
	if err == nil {
		f.Shop, err = textParam(c, "shop")
	}
	if err == nil && q.Has("cursor") {
		f.After, err = tracking.ParseCursor(c.Query("cursor"))
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	f.From, f.To = r.Start(), r.End()
	p, err := a.Tracking.EventsPage(c.Request.Context(), f)
	if err != nil {
		a.fail(c, err)
		return
	}
	out := TrackingEventsPage{Range: r, Events: p.Events, Source: "tracking_events"}
	if out.Events == nil {
		out.Events = []tracking.Event{}
	}
	if p.NextCursor != "" {
		out.NextCursor = &p.NextCursor
	}
	c.JSON(http.StatusOK, out)
}

// TrackingJourneyResponse is one acquisition's journey.
type TrackingJourneyResponse struct {
	Journey tracking.Journey `json:"journey"`
	Source  string           `json:"source"`
}

// trackingJourney answers GET /api/v1/tracking/acquisitions/{id}: read-only, only the selected
// apps' events; an ID none of them carries is 404, as an ID of another workspace is.
func (a *API) trackingJourney(c *gin.Context) {
	id, sourceID := c.Param("id"), c.Query("sourceId")
	if err := a.sourceParam(c, sourceID); err != nil {
		a.fail(c, err)
		return
	}
	j, err := a.Tracking.Journey(c.Request.Context(), scope(c), id, sourceID)
	if errors.Is(err, tracking.ErrUnknownAcquisition) {
		err = fmt.Errorf("%w: acquisition %q (%v)", errNotFound, id, err)
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, TrackingJourneyResponse{Journey: j, Source: "tracking_journey"})
}
