package adminapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// People is the part of the control plane that keeps users, memberships and one-time links
// (controlplane/users*.go).
type People interface {
	authn.Users
	AuthenticateUser(ctx context.Context, email, password string) (controlplane.User, error)
	ChangePassword(ctx context.Context, userID, current, next string) error
	SetUserName(ctx context.Context, userID, name string) (controlplane.User, error)
	MemberList(ctx context.Context, workspaceID string) ([]controlplane.MemberInfo, error)
	SetMemberRole(ctx context.Context, actor, workspaceID, userID, role string) (controlplane.MemberInfo, error)
	RemoveMember(ctx context.Context, actor, workspaceID, userID string) (controlplane.MemberInfo, error)
	CreateInvitation(ctx context.Context, actor, workspaceID, email, role string, ttl time.Duration) (string, controlplane.Invitation, error)
	AcceptInvitation(ctx context.Context, token, name, password string) (controlplane.User, error)
	CreatePasswordReset(ctx context.Context, actor, workspaceID, email string, ttl time.Duration) (string, error)
	CompletePasswordReset(ctx context.Context, token, password string) (controlplane.User, error)
	AuditUser(ctx context.Context, userID string, e controlplane.AuditEntry) error
}

var _ People = (*controlplane.Store)(nil)

// Console is the API's side of console sign-in: sessions, the sign-in throttle and where links
// point. Nil leaves the people routes answering 409 not_configured and accepts keys only.
type Console struct {
	Auth     *authn.Console
	Throttle *authn.Throttle
	// BaseURL is the console's public URL; one-time links are BaseURL + "/#/…?token=…".
	BaseURL string
}

// The refusals of sign-in. One message for an unknown address and a wrong password: which one it
// was is not told (docs/SECURITY.md, "Console sessions").
var (
	errSignIn          = apierror.New(apierror.Unauthorized, "wrong e-mail address or password")
	errWrongCurrent    = apierror.New(apierror.Forbidden, "the current password is wrong")
	errNotConfigured   = apierror.New(apierror.NotConfigured, "console sign-in is not configured on this server")
	errInvalidLink     = apierror.New(apierror.InvalidParameter, "token: "+controlplane.ErrTokenInvalid.Error())
	errExistingAccount = apierror.New(apierror.Forbidden, "this e-mail address already has an account: accept with its current password")
)

// registerSession mounts the routes that are not a workspace's: sign-in, the one-time links (the
// link is the credential) and the signed-in person's own session and account.
func (a *API) registerSession(r gin.IRouter) {
	// Signing in (by password or by a one-time link) has no session yet, so no CSRF token: the
	// Origin check is what keeps another site from signing a browser in.
	r.POST("/api/admin/session", noStore, a.consoleConfigured, a.sameOrigin, a.signIn)
	r.POST("/api/admin/invitations/accept", noStore, a.consoleConfigured, a.sameOrigin, a.acceptInvitation)
	r.POST("/api/admin/password-resets/complete", noStore, a.consoleConfigured, a.sameOrigin, a.completeReset)
	var auth *authn.Console
	if a.Console != nil {
		auth = a.Console.Auth
	}
	me := r.Group("/api/admin", noStore, a.consoleConfigured, authn.RequireSession(auth, writeError))
	me.GET("/session", a.getSession)
	me.DELETE("/session", a.signOut)
	me.PUT("/account", a.putAccount)
	me.PUT("/account/password", a.putPassword)
}

func (a *API) sameOrigin(c *gin.Context) {
	if err := a.Console.Auth.Sessions.CheckOrigin(c.Request); err != nil {
		writeError(c, err)
		c.Abort()
		return
	}
	c.Next()
}

func (a *API) consoleConfigured(c *gin.Context) {
	if a.Console == nil || a.People == nil {
		writeError(c, errNotConfigured)
		c.Abort()
		return
	}
	c.Next()
}

type signInRequest struct {
	Email    string `json:"email" binding:"required"`
	Password string `json:"password" binding:"required"`
}

type sessionUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type sessionWorkspace struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Role string `json:"role"`
}

func (a *API) signIn(c *gin.Context) {
	var req signInRequest
	if err := bind(c, &req); err != nil {
		writeError(c, err)
		return
	}
	ctx := c.Request.Context()
	account, addr := controlplane.NormalizeEmail(req.Email), c.ClientIP()
	if err := a.Console.Throttle.Check(ctx, account, addr); err != nil {
		writeError(c, err)
		return
	}
	u, err := a.People.AuthenticateUser(ctx, account, req.Password)
	if errors.Is(err, controlplane.ErrWrongPassword) {
		if err := a.Console.Throttle.Fail(ctx, account, addr); err != nil {
			a.fail(c, err)
			return
		}
		// The target is the address tried: a person's ID when it is theirs, never telling which.
		a.auditUser(ctx, controlplane.UserID(account), "user.sign_in_failed", "address:"+addr, map[string]string{"email": account, "address": addr})
		writeError(c, errSignIn)
		return
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	_ = a.Console.Throttle.Succeed(ctx, account)
	a.startSession(c, u, "user.sign_in", http.StatusOK)
}

// startSession creates a session for u, sets the cookie and answers the session's body. A session
// the browser already held ends: its cookie is replaced, and a session nobody can use any more
// should not stay valid until it expires.
func (a *API) startSession(c *gin.Context, u controlplane.User, action string, status int) {
	ctx := c.Request.Context()
	sessions := a.Console.Auth.Sessions
	if ck, err := c.Request.Cookie(authn.CookieName); err == nil {
		if old, err := sessions.Lookup(ctx, ck.Value); err == nil {
			_ = sessions.End(ctx, old)
		}
	}
	id, sess, err := sessions.Create(ctx, u.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	a.auditUser(ctx, u.ID, action, "user:"+u.ID, map[string]string{"email": u.Email, "address": c.ClientIP()})
	http.SetCookie(c.Writer, a.Console.Auth.Sessions.Cookie(id))
	a.sessionBody(c, u, sess, status)
}

func (a *API) sessionBody(c *gin.Context, u controlplane.User, sess authn.Session, status int) {
	ms, err := a.People.Memberships(c.Request.Context(), u.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	ws := make([]sessionWorkspace, 0, len(ms))
	for _, m := range ms {
		ws = append(ws, sessionWorkspace{ID: m.Workspace.ID, Slug: m.Workspace.Slug, Name: m.Workspace.Name, Role: m.Role})
	}
	c.JSON(status, gin.H{"user": sessionUser{ID: u.ID, Email: u.Email, Name: u.Name}, "workspaces": ws, "csrfToken": sess.CSRFToken})
}

// auditUser records a person's event; a failure to record is logged, not answered, because the
// sign-in itself is done (or refused) either way.
func (a *API) auditUser(ctx context.Context, userID, action, actor string, details map[string]string) {
	err := a.People.AuditUser(context.WithoutCancel(ctx), userID, controlplane.AuditEntry{Actor: actor, Action: action,
		TargetType: "user", TargetID: userID, Details: details})
	if err != nil {
		a.Log.Warn("audit failed", "action", action, "err", err)
	}
}

func (a *API) getSession(c *gin.Context) {
	caller := authn.From(c)
	a.sessionBody(c, *caller.User, *caller.Session, http.StatusOK)
}

func (a *API) signOut(c *gin.Context) {
	caller := authn.From(c)
	if err := a.Console.Auth.Sessions.End(c.Request.Context(), *caller.Session); err != nil {
		a.fail(c, err)
		return
	}
	a.auditUser(c.Request.Context(), caller.User.ID, "user.sign_out", caller.Actor(), map[string]string{"email": caller.User.Email})
	http.SetCookie(c.Writer, a.Console.Auth.Sessions.ClearCookie())
	c.Status(http.StatusNoContent)
}

// endSessions ends a person's sessions but keep ("" ends all) and audits it.
func (a *API) endSessions(ctx context.Context, actor string, u controlplane.User, keep, why string) error {
	n, err := a.Console.Auth.Sessions.EndUser(ctx, u.ID, keep)
	if err != nil {
		return err
	}
	a.auditUser(ctx, u.ID, "user.sessions_revoke", actor, map[string]string{"email": u.Email, "ended": strconv.Itoa(n), "why": why})
	return nil
}
