package adminapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/uploader"
)

// ParseQueueTime reads a from/to bound of the queue list: an RFC 3339 time, or a date (midnight
// UTC). Empty is no bound.
func ParseQueueTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, invalidParam(name + " must be an RFC 3339 time or a YYYY-MM-DD date")
}

// listQueue lists the workspace's upload-queue rows, newest first:
// ?status=&mappingId=&from=&to=&limit=&cursor= (from inclusive and to exclusive bound the row's
// creation; cursor is the nextCursor of the previous page).
func (h adsHandlers) listQueue(c *gin.Context) {
	limit, err := limitParam(c, uploader.DefaultListLimit, uploader.MaxListLimit)
	if err != nil {
		h.fail(c, err)
		return
	}
	f := uploader.ListFilter{Status: uploader.Status(c.Query("status")), MappingID: c.Query("mappingId"), Limit: limit,
		Cursor: c.Query("cursor")}
	if f.From, err = ParseQueueTime("from", c.Query("from")); err == nil {
		f.To, err = ParseQueueTime("to", c.Query("to"))
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	page, err := h.Rows.List(c.Request.Context(), authn.From(c).Workspace.ID, f)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

// retryRow queues a rejected row again (user Retry). 409 not_retryable, with a reason, when the
// row is not rejected, holds no click evidence or was rejected for a local reason.
func (h adsHandlers) retryRow(c *gin.Context) {
	caller := authn.From(c)
	row, err := RetryUploadRow(c.Request.Context(), h.Rows, h.Audit, caller.Actor(), caller.Workspace.ID, c.Param("rowId"))
	if err != nil {
		var audit auditError
		if !errors.As(err, &audit) {
			h.fail(c, err)
			return
		}
		// The row is queued again whatever the audit write does; a failed write is logged.
		h.Log.Error("audit of an upload row retry failed", "row_id", row.RowID, "err", err)
	}
	c.JSON(http.StatusOK, gin.H{"row": row})
}

// auditError is a failed audit write after the change itself was made.
type auditError struct{ err error }

func (a auditError) Error() string { return "audit: " + a.err.Error() }
func (a auditError) Unwrap() error { return a.err }

// RetryUploadRow retries a row and records the user Retry in the audit log (the queue itself does
// not audit). When only the audit write fails, the retried row is returned with an error.
func RetryUploadRow(ctx context.Context, rows UploadRows, audit Auditor, actor, workspaceID, rowID string) (uploader.Row, error) {
	row, err := rows.Retry(ctx, workspaceID, strings.TrimSpace(rowID))
	if err != nil {
		return uploader.Row{}, err
	}
	if err := audit.Audit(context.WithoutCancel(ctx), controlplane.AuditEntry{WorkspaceID: workspaceID, Actor: actor,
		Action: "ads_upload_row.retry", TargetType: "upload_row", TargetID: row.RowID,
		Details: map[string]string{"mappingId": row.MappingID, "status": string(row.Status)}}); err != nil {
		return row, auditError{err}
	}
	return row, nil
}
