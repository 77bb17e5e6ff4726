// Package query is the read-only, key-authenticated edge for workspace users: the reporting REST API
// under /api/v1; the MCP server at /api/mcp (query/mcp) answers from the same service. It never writes
// and never triggers a platform sync.
package query

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/tracking"
)

// TrackingReader is the read side of acquisition tracking (query/tracking.Store).
type TrackingReader interface {
	RecentEvents(ctx context.Context, f tracking.Filter) ([]tracking.Event, error)
	Troubleshoot(ctx context.Context, sc tracking.Scope, sourceID string, since time.Time) (tracking.Troubleshooting, error)
	Funnel(ctx context.Context, f tracking.FunnelFilter) (tracking.Funnel, error)
	Ledger(ctx context.Context, sc tracking.Scope, from, to time.Time) ([]tracking.LedgerRow, error)
}

// Sources resolves a workspace's tracking sources (controlplane.Store).
type Sources interface {
	SourceByID(ctx context.Context, workspaceID, id string) (controlplane.Source, error)
}

// Reporting is the read side of subscription reporting (query/reporting.Store).
type Reporting interface {
	Summary(ctx context.Context, req reporting.Request) (reporting.Summary, error)
	Metric(ctx context.Context, name string, req reporting.Request) (reporting.MetricResponse, error)
	Customers(ctx context.Context, req reporting.ListRequest) (reporting.CustomerList, error)
	Customer(ctx context.Context, req reporting.DetailRequest) (reporting.CustomerDetail, error)
}

var (
	_ TrackingReader = (*tracking.Store)(nil)
	_ Sources        = (*controlplane.Store)(nil)
	_ Reporting      = (*reporting.Store)(nil)
)

// API serves /api/v1.
type API struct {
	Keys     authn.Keys
	Sources  Sources
	Tracking TrackingReader
	// Reporting serves the summary, metrics and customers routes.
	Reporting Reporting
	// Budget is the per-key cost budget and the cap on concurrent computations (limits.go); nil
	// limits nothing.
	Budget *budget.Budget
	Log    *slog.Logger
	Now    func() time.Time
}

// Register mounts the routes. Every response disables caching (specification: reporting). Only
// workspace keys call them from outside: a tracking private key reads through MCP, whose in-process
// requests are let through (authn.RequireWorkspaceKey).
func (a *API) Register(r gin.IRouter) {
	if a.Now == nil {
		a.Now = time.Now
	}
	registerOpenAPI(r)
	v1 := r.Group("/api/v1", noStore, authn.Middleware(a.Keys, writeError), authn.RequireWorkspaceKey(writeError), a.admit)
	v1.GET("/tracking/events", a.trackingEvents)
	v1.GET("/tracking/sources/:id/status", a.trackingStatus)
	v1.GET("/tracking/funnel", a.trackingFunnel)
	v1.GET("/tracking/ledger", a.trackingLedger)
	v1.GET("/summary", a.summary)
	v1.GET("/metrics/:metric", a.metric)
	v1.GET("/customers", a.customers)
	v1.GET("/customers/:customerId", a.customer)
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// writeError is this edge's one error-to-status table (specification: Errors).
func writeError(c *gin.Context, err error) {
	status, code := http.StatusServiceUnavailable, "unavailable"
	msg := "temporary failure; retry with exponential backoff"
	var ambiguous *reporting.AmbiguousError
	var limit *budget.LimitError
	switch {
	case errors.As(err, &ambiguous):
		c.AbortWithStatusJSON(http.StatusConflict, gin.H{"error": "ambiguous_customer", "message": ambiguous.Error(),
			"customerIds": ambiguous.CustomerIDs})
		return
	case errors.As(err, &limit):
		c.Header("Retry-After", strconv.Itoa(limit.RetryAfterSeconds()))
		status, code, msg = http.StatusTooManyRequests, "rate_limited", limit.Error()
		if errors.Is(err, budget.ErrOverloaded) {
			status, code = http.StatusServiceUnavailable, "overloaded"
		}
	case errors.Is(err, controlplane.ErrInvalidKey):
		status, code, msg = http.StatusUnauthorized, "unauthorized", "missing, invalid or revoked key (a tracking private key stops working when its source is disabled or the key rotated)"
	case errors.Is(err, controlplane.ErrInactiveSubs):
		status, code, msg = http.StatusForbidden, "subscription_inactive", "the workspace lacks an active subscription"
	case errors.Is(err, authn.ErrSourceKey):
		status, code, msg = http.StatusForbidden, "forbidden", err.Error()
	case errors.Is(err, errInvalidParam), errors.Is(err, tracking.ErrInvalidFilter), errors.Is(err, reporting.ErrInvalid):
		status, code, msg = http.StatusBadRequest, "invalid_parameter", err.Error()
	case errors.Is(err, controlplane.ErrNotFound), errors.Is(err, errNotFound), errors.Is(err, reporting.ErrNotFound):
		status, code, msg = http.StatusNotFound, "not_found", err.Error()
	}
	c.AbortWithStatusJSON(status, gin.H{"error": code, "message": msg})
}

var errNotFound = errors.New("not found in this workspace")

func (a *API) fail(c *gin.Context, err error) {
	var ambiguous *reporting.AmbiguousError
	var limit *budget.LimitError
	if !errors.Is(err, errInvalidParam) && !errors.Is(err, tracking.ErrInvalidFilter) && !errors.Is(err, controlplane.ErrNotFound) &&
		!errors.Is(err, errNotFound) && !errors.Is(err, reporting.ErrInvalid) && !errors.Is(err, reporting.ErrNotFound) &&
		!errors.As(err, &ambiguous) && !errors.As(err, &limit) {
		a.Log.Warn("query failed", "path", c.FullPath(), "err", err)
	}
	writeError(c, err)
}

// scope is what the caller may read: its workspace's selected apps.
func scope(c *gin.Context) tracking.Scope {
	w := authn.From(c).Workspace
	return tracking.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}
}
