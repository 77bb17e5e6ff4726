// Package query is the read-only, key-authenticated edge for workspace users: the reporting REST API
// under /api/v1 (and, with later issues, the MCP server at /api/mcp). It never writes and never
// triggers a platform sync.
package query

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/internal/authn"
	"github.com/revtrack/revtrack/internal/controlplane"
	"github.com/revtrack/revtrack/query/tracking"
)

// TrackingReader is the read side of acquisition tracking (query/tracking.Store).
type TrackingReader interface {
	RecentEvents(ctx context.Context, f tracking.Filter) ([]tracking.Event, error)
	Troubleshoot(ctx context.Context, sc tracking.Scope, sourceID string, since time.Time) (tracking.Troubleshooting, error)
	Funnel(ctx context.Context, f tracking.FunnelFilter) (tracking.Funnel, error)
	Ledger(ctx context.Context, sc tracking.Scope, from, to time.Time) ([]tracking.LedgerRow, error)
}

// Sources resolves a workspace's tracking sources (internal/controlplane.Store).
type Sources interface {
	SourceByID(ctx context.Context, workspaceID, id string) (controlplane.Source, error)
}

var (
	_ TrackingReader = (*tracking.Store)(nil)
	_ Sources        = (*controlplane.Store)(nil)
)

// API serves /api/v1.
type API struct {
	Keys     authn.Keys
	Sources  Sources
	Tracking TrackingReader
	Log      *slog.Logger
	Now      func() time.Time
}

// Register mounts the routes. Every response disables caching (specification: reporting).
func (a *API) Register(r gin.IRouter) {
	if a.Now == nil {
		a.Now = time.Now
	}
	v1 := r.Group("/api/v1", noStore, authn.Middleware(a.Keys, writeError))
	v1.GET("/tracking/events", a.trackingEvents)
	v1.GET("/tracking/sources/:id/status", a.trackingStatus)
	v1.GET("/tracking/funnel", a.trackingFunnel)
	v1.GET("/tracking/ledger", a.trackingLedger)
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// writeError is this edge's one error-to-status table (specification: Errors).
func writeError(c *gin.Context, err error) {
	status, code := http.StatusServiceUnavailable, "unavailable"
	msg := "temporary failure; retry with exponential backoff"
	switch {
	case errors.Is(err, controlplane.ErrInvalidKey):
		status, code, msg = http.StatusUnauthorized, "unauthorized", "missing, invalid or revoked key"
	case errors.Is(err, controlplane.ErrInactiveSubs):
		status, code, msg = http.StatusForbidden, "subscription_inactive", "the workspace lacks an active subscription"
	case errors.Is(err, errInvalidParam), errors.Is(err, tracking.ErrInvalidFilter):
		status, code, msg = http.StatusBadRequest, "invalid_parameter", err.Error()
	case errors.Is(err, controlplane.ErrNotFound), errors.Is(err, errNotFound):
		status, code, msg = http.StatusNotFound, "not_found", err.Error()
	}
	c.AbortWithStatusJSON(status, gin.H{"error": code, "message": msg})
}

var errNotFound = errors.New("not found in this workspace")

func (a *API) fail(c *gin.Context, err error) {
	if !errors.Is(err, errInvalidParam) && !errors.Is(err, tracking.ErrInvalidFilter) && !errors.Is(err, controlplane.ErrNotFound) &&
		!errors.Is(err, errNotFound) {
		a.Log.Warn("query failed", "path", c.FullPath(), "err", err)
	}
	writeError(c, err)
}

// scope is what the caller may read: its workspace's selected apps.
func scope(c *gin.Context) tracking.Scope {
	w := authn.From(c).Workspace
	return tracking.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}
}
