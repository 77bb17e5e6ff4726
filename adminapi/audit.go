package adminapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// audit pages the workspace's audit log, newest first, filtered by action (a name or its
// beginning), actor (exactly) and UTC dates (from and to both included), so that a person can
// answer "who revoked this key" or "what changed yesterday" without reading every entry.
func (a *API) audit(c *gin.Context) {
	limit, err := limitParam(c, 50, 500)
	if err != nil {
		a.fail(c, err)
		return
	}
	q := controlplane.AuditQuery{Action: c.Query("action"), Actor: c.Query("actor"), Cursor: c.Query("cursor"), Limit: limit}
	if q.From, err = auditDate(c, "from"); err != nil {
		a.fail(c, err)
		return
	}
	if q.To, err = auditDate(c, "to"); err != nil {
		a.fail(c, err)
		return
	}
	if !q.To.IsZero() {
		q.To = q.To.AddDate(0, 0, 1) // the whole of the last date
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		a.fail(c, invalidParam("from must not be after to"))
		return
	}
	log, next, err := a.Store.AuditPage(c.Request.Context(), authn.From(c).Workspace.ID, q)
	if err != nil {
		a.fail(c, err)
		return
	}
	if log == nil {
		log = []controlplane.AuditEntry{}
	}
	var cursor *string
	if next != "" {
		cursor = &next
	}
	c.JSON(http.StatusOK, gin.H{"entries": log, "nextCursor": cursor})
}

// auditDate reads an optional YYYY-MM-DD (UTC) query parameter; absent is the zero time.
func auditDate(c *gin.Context, name string) (time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, invalidParam(name + " must be a date, YYYY-MM-DD (UTC)")
	}
	return t, nil
}
