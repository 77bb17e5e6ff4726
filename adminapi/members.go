package adminapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// registerMembers mounts a workspace's people: members, invitations and password resets
// (RouteAccess says who may call each).
func (a *API) registerMembers(g gin.IRouter) {
	g.GET("/members", a.consoleConfigured, a.listMembers)
	g.PUT("/members/:userId", a.consoleConfigured, a.putMember)
	g.DELETE("/members/:userId", a.consoleConfigured, a.deleteMember)
	g.POST("/invitations", a.consoleConfigured, a.invite)
	g.POST("/password-resets", a.consoleConfigured, a.createReset)
}

func (a *API) listMembers(c *gin.Context) {
	ms, err := a.People.MemberList(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"members": ms})
}

type memberRequest struct {
	Role string `json:"role" binding:"required,oneof=owner admin member"`
}

func (a *API) putMember(c *gin.Context) {
	var req memberRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	m, err := a.People.SetMemberRole(c.Request.Context(), caller.Actor(), caller.Workspace.ID, c.Param("userId"), req.Role)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"member": m})
}

// deleteMember removes a member and ends all of their sessions at once: a session must not
// outlive the membership it was used for.
func (a *API) deleteMember(c *gin.Context) {
	caller := authn.From(c)
	ctx := c.Request.Context()
	m, err := a.People.RemoveMember(ctx, caller.Actor(), caller.Workspace.ID, c.Param("userId"))
	if err == nil {
		err = a.endSessions(ctx, caller.Actor(), controlplane.User{ID: m.UserID, Email: m.Email}, "", "removed from a workspace")
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type inviteRequest struct {
	Email string `json:"email" binding:"required"`
	Role  string `json:"role" binding:"required,oneof=owner admin member"`
}

func (a *API) invite(c *gin.Context) {
	var req inviteRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	token, inv, err := a.People.CreateInvitation(c.Request.Context(), caller.Actor(), caller.Workspace.ID, req.Email, req.Role,
		a.Console.Auth.Sessions.Config().InvitationTTL)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"invitation": inv, "link": InvitationLink(a.Console.BaseURL, token)})
}

type resetRequest struct {
	Email string `json:"email" binding:"required"`
}

func (a *API) createReset(c *gin.Context) {
	var req resetRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	token, err := a.People.CreatePasswordReset(c.Request.Context(), caller.Actor(), caller.Workspace.ID, req.Email,
		a.Console.Auth.Sessions.Config().PasswordResetTTL)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"link": ResetLink(a.Console.BaseURL, token)})
}

// InvitationLink and ResetLink carry the token in the URL fragment, which browsers never send to a
// server, so it is in no access log (the console reads it and posts it).
func InvitationLink(base, token string) string { return base + "/#/accept-invitation?token=" + token }

// ResetLink: see InvitationLink.
func ResetLink(base, token string) string { return base + "/#/reset-password?token=" + token }
