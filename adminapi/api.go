// Package adminapi is the control-plane HTTP API under /api/admin: tracking sources, workspace keys,
// the audit log, the partner connection and the advertising-conversion setup. It needs an
// admin-scoped workspace key, because the specification reserves these operations for workspace
// owners and admins (the one exception is Google's OAuth callback, which a browser reaches without
// a key). Every change is audited with the key's ID.
package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/uploader"
)

// Store is the part of the control plane the API uses.
type Store interface {
	authn.Keys
	Sources(ctx context.Context, workspaceID string) ([]controlplane.Source, error)
	SourceByID(ctx context.Context, workspaceID, id string) (controlplane.Source, error)
	CreateSource(ctx context.Context, actor, slug, appID, name string, origins []string) (controlplane.Source, string, error)
	SetSourceEnabled(ctx context.Context, actor, workspaceID, id string, enabled bool) (controlplane.Source, error)
	SetSourceOrigins(ctx context.Context, actor, workspaceID, id string, origins []string) (controlplane.Source, error)
	RotatePublicKey(ctx context.Context, actor, workspaceID, id string) (controlplane.Source, error)
	RotatePrivateKey(ctx context.Context, actor, workspaceID, id string) (controlplane.Source, string, error)
	CreateAPIKey(ctx context.Context, actor, slug, name, scope string) (string, controlplane.APIKey, error)
	APIKeys(ctx context.Context, workspaceID string) ([]controlplane.APIKey, error)
	RevokeAPIKey(ctx context.Context, actor, keyID string) (controlplane.APIKey, error)
	AuditLog(ctx context.Context, workspaceID string, limit int) ([]controlplane.AuditEntry, error)
}

var _ Store = (*controlplane.Store)(nil)

// API serves /api/admin.
type API struct {
	Store Store
	Log   *slog.Logger
	// Sync serves the partner connection and sync runs (partner.go, syncruns.go); nil leaves them out.
	Sync *SyncAPI
	// Ads serves the advertising connection, mappings, upload queue and verification (ads.go); nil
	// leaves them out.
	Ads *AdsAPI
	// Analysts grants the workspace's analyst access (analyst.go); nil answers 409 not configured.
	Analysts AnalystAccess
}

// Register mounts the routes behind key authentication and the admin scope.
func (a *API) Register(r gin.IRouter) {
	g := r.Group("/api/admin", noStore, authn.Middleware(a.Store, writeError), authn.RequireAdmin(writeError))
	g.GET("/sources", a.listSources)
	g.POST("/sources", a.createSource)
	g.GET("/sources/:id", a.getSource)
	g.PATCH("/sources/:id", a.updateSource)
	g.POST("/sources/:id/rotate-public-key", a.rotatePublic)
	g.POST("/sources/:id/rotate-private-key", a.rotatePrivate)
	g.GET("/keys", a.listKeys)
	g.POST("/keys", a.createKey)
	g.POST("/keys/:id/revoke", a.revokeKey)
	g.GET("/audit", a.audit)
	a.registerExclusions(g)
	a.registerAnalysts(g)
	if a.Sync != nil {
		a.Sync.register(g, a.fail)
	}
	if a.Ads != nil {
		a.Ads.register(r, g, a.fail)
	}
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// writeError is this edge's one error-to-status table.
func writeError(c *gin.Context, err error) {
	status, body := errorBody(err)
	c.AbortWithStatusJSON(status, body)
}

// errorBody is the status and the {error, message} body of err. Some errors add a field that a
// client acts on (the scopes not granted, why a Retry was refused).
//
// The advertising setup's errors: not configured is 409 ads_not_configured, not 503, because
// the deployment has no OAuth client (or account discovery is off) and retrying cannot help; an
// unconfirmed revocation is 502 revocation_unconfirmed (Google did not confirm, the connection
// and its credential stay, the disconnection may be retried); Google unavailable is 503.
func errorBody(err error) (int, gin.H) {
	status, code := http.StatusServiceUnavailable, "unavailable"
	msg := "temporary failure; retry with exponential backoff"
	body := gin.H{}
	var scopes *uploader.MissingScopesError
	var retry *uploader.RetryError
	switch {
	case errors.Is(err, controlplane.ErrInvalidKey):
		status, code, msg = http.StatusUnauthorized, "unauthorized", "missing, invalid or revoked key"
	case errors.Is(err, controlplane.ErrInactiveSubs):
		status, code, msg = http.StatusForbidden, "subscription_inactive", "the workspace lacks an active subscription"
	case errors.Is(err, authn.ErrForbiddenScope):
		status, code, msg = http.StatusForbidden, "forbidden", err.Error()
	case errors.As(err, &scopes):
		status, code, msg = http.StatusBadRequest, "missing_scopes", err.Error()
		body["missingScopes"] = scopes.Missing
	case errors.Is(err, errConsentDenied):
		status, code, msg = http.StatusBadRequest, "access_denied", err.Error()
	case errors.Is(err, controlplane.ErrInvalid), errors.Is(err, errBadRequest), errors.Is(err, uploader.ErrInvalidFilter):
		status, code, msg = http.StatusBadRequest, "invalid_request", err.Error()
	case errors.Is(err, controlplane.ErrNotFound), errors.Is(err, uploader.ErrRowNotFound):
		status, code, msg = http.StatusNotFound, "not_found", err.Error()
	case errors.As(err, &retry):
		status, code, msg = http.StatusConflict, "not_retryable", err.Error()
		body["reason"] = retry.Reason
	case errors.Is(err, uploader.ErrRevocationUnconfirmed):
		status, code, msg = http.StatusBadGateway, "revocation_unconfirmed", err.Error()
	case errors.Is(err, controlplane.ErrConflict):
		status, code, msg = http.StatusConflict, "conflict", err.Error()
	case errors.Is(err, uploader.ErrNotConfigured):
		status, code, msg = http.StatusConflict, "ads_not_configured", err.Error()
	case errors.Is(err, analystaccess.ErrNotConfigured):
		status, code, msg = http.StatusConflict, "analyst_access_not_configured", err.Error()
	case errors.Is(err, uploader.ErrUnavailable), errors.Is(err, controlplane.ErrEraseUnconfirmed):
		msg = err.Error()
	}
	body["error"], body["message"] = code, msg
	return status, body
}

var errBadRequest = errors.New("invalid request")

func (a *API) fail(c *gin.Context, err error) {
	if !errors.Is(err, controlplane.ErrInvalid) && !errors.Is(err, controlplane.ErrNotFound) && !errors.Is(err, errBadRequest) {
		a.Log.Warn("admin request failed", "path", c.FullPath(), "err", err)
	}
	writeError(c, err)
}

func bind(c *gin.Context, v any) error {
	if err := c.ShouldBindJSON(v); err != nil {
		return errors.Join(errBadRequest, errors.New("request body is not valid JSON for this operation: "+err.Error()))
	}
	return nil
}

// bindOptional is bind for operations whose body may be absent: an empty body, whatever its
// transfer encoding (a chunked request has no Content-Length), leaves v at its zero value.
func bindOptional(c *gin.Context, v any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, 1<<20))
	if err != nil {
		return errors.Join(errBadRequest, errors.New("request body could not be read"))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errors.Join(errBadRequest, errors.New("request body is not valid JSON for this operation: "+err.Error()))
	}
	return nil
}

func limitParam(c *gin.Context, def, max int) (int, error) {
	s := c.Query("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, errors.Join(errBadRequest, errors.New("limit must be an integer from 1 to "+strconv.Itoa(max)))
	}
	return n, nil
}
