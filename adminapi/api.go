// Package adminapi is the control-plane HTTP API under /api/admin: tracking sources, workspace keys,
// the audit log, the partner connection, the advertising-conversion setup, and console sign-in with
// its people (session.go, members.go, account.go). It needs an admin-scoped workspace key, because
// these operations are reserved to workspace owners and admins (docs/API.md, "Keys"), or a console
// session whose role reaches the route's (roles.go, docs/SECURITY.md "Roles"); the exceptions are
// sign-in, the one-time links and the browser's leg of the Google connection, which authenticate
// themselves (docs/API.md, "What it covers"). Every change is audited with the key's or person's ID.
package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/gin-gonic/gin/binding"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
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
	AuditPage(ctx context.Context, workspaceID string, q controlplane.AuditQuery) ([]controlplane.AuditEntry, string, error)
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
	// People and Console are console sign-in: users, members, one-time links (controlplane) and
	// sessions (session.go); without them the people routes answer 409 and only keys authenticate.
	People  People
	Console *Console
}

// Register mounts the routes behind key or session authentication and RouteAccess (roles.go), and
// the session routes (session.go).
func (a *API) Register(r gin.IRouter) {
	a.registerSession(r)
	var console *authn.Console
	if a.Console != nil {
		console = a.Console.Auth
	}
	g := r.Group("/api/admin", noStore, authn.MiddlewareWithConsole(a.Store, console, writeError), requireAccess(writeError))
	a.registerMembers(g)
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

// writeError is this edge's one error-to-status table: toAPIError maps, apierror writes.
func writeError(c *gin.Context, err error) {
	var throttled *authn.ThrottledError
	if errors.As(err, &throttled) {
		c.Header("Retry-After", strconv.Itoa(throttled.Seconds()))
	}
	apierror.Write(c, toAPIError(err))
}

// errorBody is the status and the {error, message} body of err, for the answers that are not
// always JSON (the browser's leg of the advertising connection).
func errorBody(err error) (int, gin.H) {
	ae := toAPIError(err)
	return ae.Status(), ae.Body()
}

// The refusals of this edge that are not built from the error they answer.
var (
	errUnauthorized = apierror.New(apierror.Unauthorized, "missing, invalid or revoked key")
	errSubscription = apierror.New(apierror.SubscriptionInactive, "the workspace lacks an active subscription")
	errUnavailable  = apierror.New(apierror.Unavailable, "temporary failure; retry with exponential backoff")
)

// toAPIError maps err onto a code of the API's closed list (docs/API.md "Errors"). Some refusals
// add a field that a client acts on (the scopes not granted, why a Retry was refused).
//
// The advertising setup's errors: not configured is 409 not_configured, not 503, because the
// deployment has no OAuth client (or account discovery is off) and retrying cannot help; an
// unconfirmed revocation is 502 revocation_unconfirmed (Google did not confirm, the connection and
// its credential stay, the disconnection may be retried); Google unavailable is 503.
func toAPIError(err error) *apierror.Error {
	var ae *apierror.Error
	var scopes *uploader.MissingScopesError
	var retry *uploader.RetryError
	var throttled *authn.ThrottledError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &throttled):
		return throttled.APIError()
	case errors.Is(err, controlplane.ErrInvalidKey):
		return errUnauthorized
	case errors.Is(err, controlplane.ErrInactiveSubs):
		return errSubscription
	case errors.Is(err, authn.ErrForbiddenScope):
		return apierror.New(apierror.Forbidden, err.Error())
	case errors.As(err, &scopes):
		return &apierror.Error{Code: apierror.MissingScopes, Message: err.Error(), Fields: map[string]any{"missingScopes": scopes.Missing}}
	case errors.Is(err, controlplane.ErrInvalid), errors.Is(err, uploader.ErrInvalidFilter):
		return apierror.New(apierror.InvalidParameter, err.Error())
	case errors.Is(err, controlplane.ErrNotFound), errors.Is(err, uploader.ErrRowNotFound):
		return apierror.New(apierror.NotFound, err.Error())
	case errors.As(err, &retry):
		return &apierror.Error{Code: apierror.NotRetryable, Message: err.Error(), Fields: map[string]any{"reason": retry.Reason}}
	case errors.Is(err, uploader.ErrRevocationUnconfirmed):
		return apierror.New(apierror.RevocationUnconfirmed, err.Error())
	case errors.Is(err, controlplane.ErrConflict):
		return apierror.New(apierror.Conflict, err.Error())
	case errors.Is(err, uploader.ErrNotConfigured), errors.Is(err, analystaccess.ErrNotConfigured):
		return apierror.New(apierror.NotConfigured, err.Error())
	case errors.Is(err, uploader.ErrUnavailable), errors.Is(err, controlplane.ErrEraseUnconfirmed):
		return apierror.New(apierror.Unavailable, err.Error())
	default:
		return errUnavailable
	}
}

// invalidParam is a 400 naming the parameter or field and what it must be.
func invalidParam(msg string) *apierror.Error { return apierror.New(apierror.InvalidParameter, msg) }

// invalidBody is a 400 for a body that is not the operation's JSON.
func invalidBody(msg string) *apierror.Error { return apierror.New(apierror.InvalidBody, msg) }

func (a *API) fail(c *gin.Context, err error) {
	// A refused parameter or a missing resource is the caller's to fix, not an operator's.
	if ae := toAPIError(err); ae.Code != apierror.InvalidParameter && ae.Code != apierror.InvalidBody && ae.Code != apierror.NotFound {
		a.Log.Warn("admin request failed", "path", c.FullPath(), "err", err)
	}
	writeError(c, err)
}

// bind decodes the JSON body into v as gin's ShouldBindJSON does, then checks v's `binding` rules:
// a body that is not the operation's JSON is invalid_body, a field that breaks a rule
// invalid_parameter.
func bind(c *gin.Context, v any) error {
	if c.Request.Body == nil {
		return invalidBody("request body is missing")
	}
	if err := json.NewDecoder(c.Request.Body).Decode(v); err != nil {
		return invalidBody("request body is not valid JSON for this operation: " + err.Error())
	}
	return validate(v)
}

// validate applies v's `binding` rules (gin's validator, as ShouldBindJSON would).
func validate(v any) error {
	if binding.Validator == nil {
		return nil
	}
	if err := binding.Validator.ValidateStruct(v); err != nil {
		return invalidParam("request body: " + err.Error())
	}
	return nil
}

// bindOptional is bind for operations whose body may be absent: an empty body, whatever its
// transfer encoding (a chunked request has no Content-Length), leaves v at its zero value.
func bindOptional(c *gin.Context, v any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, 1<<20))
	if err != nil {
		return invalidBody("request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalidBody("request body is not valid JSON for this operation: " + err.Error())
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
		return 0, invalidParam("limit must be an integer from 1 to " + strconv.Itoa(max))
	}
	return n, nil
}
