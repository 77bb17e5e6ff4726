package authn

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// WorkspaceHeader names, by slug, the workspace a cookie-authenticated request acts in.
const WorkspaceHeader = "X-Revtrack-Workspace"

// Users resolves a session's person and workspaces (controlplane.Store).
type Users interface {
	SessionUser(ctx context.Context, id string) (controlplane.User, error)
	Memberships(ctx context.Context, userID string) ([]controlplane.Membership, error)
}

var _ Users = (*controlplane.Store)(nil)

// Refusals of cookie authentication, in the API's closed list.
var (
	errSignedOut         = apierror.New(apierror.Unauthorized, ErrNoSession.Error())
	ErrNotMember         = apierror.New(apierror.Forbidden, "you are not a member of the workspace "+WorkspaceHeader+" names")
	ErrNoWorkspace       = apierror.New(apierror.Forbidden, "you are not a member of any workspace; ask an owner for an invitation")
	ErrWorkspaceRequired = apierror.New(apierror.InvalidParameter, "you belong to several workspaces: name one with the "+WorkspaceHeader+" header (its slug)")
)

// Console is what cookie authentication needs. A nil *Console authenticates keys only.
type Console struct {
	Sessions *Sessions
	Users    Users
}

// SignedIn resolves the request's session cookie to its session and user (errSignedOut when
// there is none, or the user is gone).
func (c *Console) SignedIn(ctx context.Context, r *http.Request) (Session, controlplane.User, error) {
	if c == nil {
		return Session{}, controlplane.User{}, errSignedOut
	}
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return Session{}, controlplane.User{}, errSignedOut
	}
	sess, err := c.Sessions.Lookup(ctx, ck.Value)
	if errors.Is(err, ErrNoSession) {
		return Session{}, controlplane.User{}, errSignedOut
	}
	if err != nil {
		return Session{}, controlplane.User{}, err
	}
	u, err := c.Users.SessionUser(ctx, sess.UserID)
	if errors.Is(err, controlplane.ErrNotFound) {
		_ = c.Sessions.End(ctx, sess)
		return Session{}, controlplane.User{}, errSignedOut
	}
	return sess, u, err
}

// authenticateSession is cookie authentication of a workspace request: the session, its CSRF
// checks for a state-changing request, and the workspace the header names (or the only one).
func (c *Console) authenticateSession(ctx context.Context, r *http.Request) (Caller, error) {
	sess, u, err := c.SignedIn(ctx, r)
	if err != nil {
		return Caller{}, err
	}
	if err := c.Sessions.CheckCSRF(r, sess); err != nil {
		return Caller{}, err
	}
	ms, err := c.Users.Memberships(ctx, u.ID)
	if err != nil {
		return Caller{}, err
	}
	slug := r.Header.Get(WorkspaceHeader)
	var m *controlplane.Membership
	switch {
	case len(ms) == 0:
		return Caller{}, ErrNoWorkspace
	case slug == "" && len(ms) > 1:
		return Caller{}, ErrWorkspaceRequired
	case slug == "":
		m = &ms[0]
	default:
		for i := range ms {
			if ms[i].Workspace.Slug == slug {
				m = &ms[i]
			}
		}
		if m == nil {
			return Caller{}, ErrNotMember
		}
	}
	if !m.Workspace.HasAccess() {
		return Caller{}, controlplane.ErrInactiveSubs
	}
	// A stand-in key ID where the API needs one: the reporting budget is per person and workspace,
	// and the advertising connection's callback rechecks the person's role through it.
	p := controlplane.Principal{WorkspaceID: m.Workspace.ID, KeyID: controlplane.SessionKeyID(u.ID, m.Workspace.ID)}
	return Caller{Principal: p, Workspace: m.Workspace, User: &u, Role: m.Role, Session: &sess}, nil
}

// MiddlewareWithConsole is Middleware that also accepts a console session: a request with an
// Authorization header is a key's, whatever cookie it carries; one without, and with the session
// cookie, is the session's (console may be nil: keys only).
func MiddlewareWithConsole(keys Keys, console *Console, onError func(*gin.Context, error)) gin.HandlerFunc {
	byKey := Middleware(keys, onError)
	return func(c *gin.Context) {
		if _, err := c.Request.Cookie(CookieName); console == nil || err != nil || c.GetHeader("Authorization") != "" {
			byKey(c)
			return
		}
		caller, err := console.authenticateSession(c.Request.Context(), c.Request)
		if err != nil {
			onError(c, err)
			c.Abort()
			return
		}
		c.Set(callerKey, caller)
		c.Next()
	}
}

// RequireSession lets through a signed-in person, whatever their workspaces (their own account and
// session routes), with the CSRF checks on a state-changing request.
func RequireSession(console *Console, onError func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		sess, u, err := console.SignedIn(c.Request.Context(), c.Request)
		if err == nil {
			err = console.Sessions.CheckCSRF(c.Request, sess)
		}
		if err != nil {
			onError(c, err)
			c.Abort()
			return
		}
		c.Set(callerKey, Caller{User: &u, Session: &sess, Principal: controlplane.Principal{KeyID: "user:" + u.ID}})
		c.Next()
	}
}
