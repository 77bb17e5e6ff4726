// Package authn authenticates bearer keys on the workspace-facing HTTP APIs (reporting, MCP, admin):
// a workspace API key (revtrack_sk_…) or a tracking source's private key (tracker_sk_…, which reads
// MCP data and nothing else, docs/API.md "Keys": RequireWorkspaceKey keeps it off the REST routes).
// Keys are never logged; only their IDs are. It also keeps console sessions (session*.go, csrf.go,
// throttle.go; docs/SECURITY.md "Console sessions"), which authenticate the REST and admin routes
// in a person's name.
package authn

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
)

// Keys resolves keys and workspaces (controlplane.Store).
type Keys interface {
	AuthenticateAPIKey(ctx context.Context, key string) (controlplane.Principal, error)
	AuthenticatePrivateKey(ctx context.Context, key string) (controlplane.Principal, error)
	Workspace(ctx context.Context, id string) (controlplane.Workspace, error)
}

var _ Keys = (*controlplane.Store)(nil)

// ErrForbiddenScope: the key is valid but may not do this (an admin operation with a read key).
var ErrForbiddenScope = errors.New("this operation needs an admin-scoped key (create one with `revtrack admin key create --scope admin`)")

// ErrSourceKey: a tracking source's private key on a route that only workspace keys may use.
var ErrSourceKey = errors.New("a tracking private key (tracker_sk_…) reads reporting data through the MCP endpoint /api/mcp only: " +
	"call the REST API with a workspace API key (revtrack_sk_…; `revtrack admin key create`)")

// Caller is an authenticated request's identity: a key, or a console session (session.go), whose
// User, Role and Session are then set.
type Caller struct {
	Principal controlplane.Principal
	Workspace controlplane.Workspace
	User      *controlplane.User
	Role      string
	Session   *Session
}

// Actor names the caller in the audit log.
func (c Caller) Actor() string {
	if c.User != nil {
		return "user:" + c.User.ID
	}
	return "key:" + c.Principal.KeyID
}

const callerKey = "revtrack.caller"

// Authenticate resolves the bearer key of a request: 401 cases return controlplane.ErrInvalidKey,
// an inactive subscription controlplane.ErrInactiveSubs (403).
func Authenticate(ctx context.Context, keys Keys, header string) (Caller, error) {
	key := ""
	if len(header) > 7 && strings.EqualFold(header[:7], "bearer ") {
		key = strings.TrimSpace(header[7:])
	}
	var (
		p   controlplane.Principal
		err error
	)
	switch {
	case strings.HasPrefix(key, controlplane.APIKeyPrefix):
		p, err = keys.AuthenticateAPIKey(ctx, key)
	case strings.HasPrefix(key, controlplane.PrivateKeyPrefix):
		p, err = keys.AuthenticatePrivateKey(ctx, key)
	default:
		return Caller{}, controlplane.ErrInvalidKey
	}
	if err != nil {
		return Caller{}, err
	}
	w, err := keys.Workspace(ctx, p.WorkspaceID)
	if err != nil {
		if errors.Is(err, controlplane.ErrNotFound) {
			return Caller{}, controlplane.ErrInvalidKey
		}
		return Caller{}, err
	}
	if !w.HasAccess() {
		return Caller{}, controlplane.ErrInactiveSubs
	}
	return Caller{Principal: p, Workspace: w}, nil
}

// Middleware authenticates every request of a route group; onError writes the edge's error reply.
func Middleware(keys Keys, onError func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		caller, err := Authenticate(c.Request.Context(), keys, c.GetHeader("Authorization"))
		if err != nil {
			onError(c, err)
			c.Abort()
			return
		}
		c.Set(callerKey, caller)
		c.Next()
	}
}

// RequireAdmin lets only admin-scoped workspace keys through (owner/admin operations).
func RequireAdmin(onError func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if From(c).Principal.Scope != controlplane.ScopeAdmin {
			onError(c, ErrForbiddenScope)
			c.Abort()
			return
		}
		c.Next()
	}
}

// RequireWorkspaceKey refuses a tracking source's private key with ErrSourceKey (403) on the REST
// routes: the private key reads MCP data only (docs/API.md, "Keys"), and the MCP endpoint
// authenticates it itself. Runs after Middleware.
func RequireWorkspaceKey(onError func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if From(c).Principal.SourceID != "" {
			onError(c, ErrSourceKey)
			c.Abort()
			return
		}
		c.Next()
	}
}

// From returns the caller that Middleware stored.
func From(c *gin.Context) Caller {
	v, _ := c.Get(callerKey)
	caller, _ := v.(Caller)
	return caller
}
