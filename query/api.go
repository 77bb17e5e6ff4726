// Package query is the read-only, key-authenticated edge for workspace users: the reporting REST API
// under /api/v1; the MCP server at /api/mcp (query/mcp) answers from the same service. It never writes
// and never triggers a platform sync.
package query

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/tracking"
)

// TrackingReader is the read side of acquisition tracking (query/tracking.Store).
type TrackingReader interface {
	EventsPage(ctx context.Context, f tracking.Filter) (tracking.Page, error)
	Journey(ctx context.Context, sc tracking.Scope, acquisitionID, sourceID string) (tracking.Journey, error)
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
	Series(ctx context.Context, name, interval string, req reporting.Request) (reporting.SeriesResponse, error)
	SeriesMetrics(ctx context.Context, names []string, interval string, req reporting.Request) ([][]reporting.MetricResponse, error)
	Movements(ctx context.Context, req reporting.MovementsRequest) (reporting.Movements, error)
	MovementCustomers(ctx context.Context, req reporting.MovementCustomersRequest) (reporting.MovementCustomerList, error)
	Cohorts(ctx context.Context, req reporting.CohortsRequest) (reporting.Cohorts, error)
	Customers(ctx context.Context, req reporting.ListRequest) (reporting.CustomerList, error)
	Customer(ctx context.Context, req reporting.DetailRequest) (reporting.CustomerDetail, error)
	Attribution(ctx context.Context, req reporting.AttributionRequest) (reporting.Attribution, error)
}

var (
	_ TrackingReader = (*tracking.Store)(nil)
	_ Sources        = (*controlplane.Store)(nil)
	_ Reporting      = (*reporting.Store)(nil)
)

// API serves /api/v1.
type API struct {
	Keys authn.Keys
	// Console authenticates console sessions as well as keys (authn.MiddlewareWithConsole); nil:
	// keys only.
	Console  *authn.Console
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

// Register mounts the routes. Every response disables caching (Cache-Control: no-store, docs/API.md).
// Only workspace keys call them: a tracking private key reads through MCP only, whose tools call the
// query service directly (docs/API.md, "Keys"), and authn.RequireWorkspaceKey refuses it here.
func (a *API) Register(r gin.IRouter) {
	if a.Now == nil {
		a.Now = time.Now
	}
	registerOpenAPI(r)
	v1 := r.Group("/api/v1", noStore, authn.MiddlewareWithConsole(a.Keys, a.Console, writeError), authn.RequireWorkspaceKey(writeError), a.admit)
	v1.GET("/tracking/events", a.trackingEventsPage)
	v1.GET("/tracking/acquisitions/:id", a.trackingJourney)
	v1.GET("/tracking/sources/:id/status", a.trackingStatus)
	v1.GET("/tracking/funnel", a.trackingFunnel)
	v1.GET("/tracking/ledger", a.trackingLedger)
	v1.GET("/summary", a.summary)
	v1.GET("/metrics/:metric", a.metric)
	v1.GET("/mrr-movements", a.mrrMovements)
	v1.GET("/mrr-movements/customers", a.mrrMovementCustomers)
	v1.GET("/cohorts", a.cohorts)
	v1.GET("/customers", a.customers)
	v1.GET("/customers/:customerId", a.customer)
	v1.GET("/attribution", a.attribution)
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// The refusals of this edge that are not built from the error they answer.
var (
	errUnauthorized = apierror.New(apierror.Unauthorized, "missing, invalid or revoked key (a tracking private key stops working when its source is disabled or the key rotated)")
	errSubscription = apierror.New(apierror.SubscriptionInactive, "the workspace lacks an active subscription")
	errUnavailable  = apierror.New(apierror.Unavailable, "temporary failure; retry with exponential backoff")
)

var errNotFound = errors.New("not found in this workspace")

// toAPIError is this edge's one error-to-status table: every failure becomes a code of the API's
// closed list (docs/API.md "Errors"); anything unexpected is unavailable.
func toAPIError(err error) *apierror.Error {
	var ae *apierror.Error
	var ambiguous *reporting.AmbiguousError
	var limit *budget.LimitError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ambiguous):
		return &apierror.Error{Code: apierror.AmbiguousCustomer, Message: ambiguous.Error(),
			Fields: map[string]any{"customerIds": ambiguous.CustomerIDs}}
	case errors.As(err, &limit):
		if errors.Is(err, budget.ErrOverloaded) {
			return apierror.New(apierror.Overloaded, limit.Error())
		}
		return apierror.New(apierror.RateLimited, limit.Error())
	case errors.Is(err, controlplane.ErrInvalidKey):
		return errUnauthorized
	case errors.Is(err, controlplane.ErrInactiveSubs):
		return errSubscription
	case errors.Is(err, authn.ErrSourceKey):
		return apierror.New(apierror.Forbidden, err.Error())
	case errors.Is(err, errInvalidParam), errors.Is(err, tracking.ErrInvalidFilter), errors.Is(err, reporting.ErrInvalid):
		return apierror.New(apierror.InvalidParameter, err.Error())
	case errors.Is(err, controlplane.ErrNotFound), errors.Is(err, errNotFound), errors.Is(err, reporting.ErrNotFound):
		return apierror.New(apierror.NotFound, err.Error())
	default:
		return errUnavailable
	}
}

// writeError answers err as toAPIError maps it; a refusal of the cost limits says when to retry.
func writeError(c *gin.Context, err error) {
	var limit *budget.LimitError
	if errors.As(err, &limit) {
		c.Header("Retry-After", strconv.Itoa(limit.RetryAfterSeconds()))
	}
	apierror.Write(c, toAPIError(err))
}

// fail answers a handler's error; only the unexpected ones (answered unavailable) are logged.
func (a *API) fail(c *gin.Context, err error) {
	if toAPIError(err) == errUnavailable {
		a.Log.Warn("query failed", "path", c.FullPath(), "err", err)
	}
	writeError(c, err)
}

// scope is what the caller may read: its workspace's selected apps.
func scope(c *gin.Context) tracking.Scope {
	w := authn.From(c).Workspace
	return tracking.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}
}
