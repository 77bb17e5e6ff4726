package adminapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// The signed-in person's own account and the one-time links (invitation, password reset).

type accountRequest struct {
	Name string `json:"name" binding:"required"`
}

func (a *API) putAccount(c *gin.Context) {
	var req accountRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	u, err := a.People.SetUserName(c.Request.Context(), authn.From(c).User.ID, req.Name)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"user": sessionUser{ID: u.ID, Email: u.Email, Name: u.Name}})
}

type passwordRequest struct {
	CurrentPassword string `json:"currentPassword" binding:"required"`
	NewPassword     string `json:"newPassword" binding:"required"`
}

// putPassword changes the password and ends every other session of the person: whoever else held
// one (a forgotten browser, a thief) is out at once. The current password is checked under the
// sign-in throttle, so a stolen session cannot guess it quickly.
func (a *API) putPassword(c *gin.Context) {
	var req passwordRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	ctx := c.Request.Context()
	account, addr := caller.User.Email, c.ClientIP()
	if err := a.Console.Throttle.Check(ctx, account, addr); err != nil {
		a.fail(c, err)
		return
	}
	err := a.People.ChangePassword(ctx, caller.User.ID, req.CurrentPassword, req.NewPassword)
	if errors.Is(err, controlplane.ErrWrongPassword) {
		if err := a.Console.Throttle.Fail(ctx, account, addr); err != nil {
			a.fail(c, err)
			return
		}
		a.fail(c, errWrongCurrent)
		return
	}
	if err == nil {
		err = a.endSessions(ctx, caller.Actor(), *caller.User, caller.Session.Hash, "password changed")
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

type acceptRequest struct {
	Token    string `json:"token" binding:"required"`
	Name     string `json:"name"`
	Password string `json:"password" binding:"required"`
}

// acceptInvitation consumes an invitation and signs the person in.
func (a *API) acceptInvitation(c *gin.Context) {
	var req acceptRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	u, err := a.People.AcceptInvitation(c.Request.Context(), req.Token, req.Name, req.Password)
	if err != nil {
		a.fail(c, linkError(err))
		return
	}
	a.startSession(c, u, "user.sign_in", http.StatusOK)
}

type completeResetRequest struct {
	Token    string `json:"token" binding:"required"`
	Password string `json:"password" binding:"required"`
}

// completeReset sets a new password from a reset link and ends all of the person's sessions.
func (a *API) completeReset(c *gin.Context) {
	var req completeResetRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	u, err := a.People.CompletePasswordReset(ctx, req.Token, req.Password)
	if err == nil {
		_ = a.Console.Throttle.Succeed(ctx, u.Email)
		err = a.endSessions(ctx, "user:"+u.ID, u, "", "password reset")
	}
	if err != nil {
		a.fail(c, linkError(err))
		return
	}
	c.Status(http.StatusNoContent)
}

// linkError maps a one-time link's refusals: the link itself, or an existing account's password.
func linkError(err error) error {
	switch {
	case errors.Is(err, controlplane.ErrTokenInvalid):
		return errInvalidLink
	case errors.Is(err, controlplane.ErrWrongPassword):
		return errExistingAccount
	}
	return err
}
