package adminapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// AnalystAccess is the part of *analystaccess.Manager the analyst-access routes use.
type AnalystAccess interface {
	Grant(ctx context.Context, actor, workspaceID string) (analystaccess.Grant, error)
	Get(ctx context.Context, workspaceID string) (analystaccess.Access, error)
	Revoke(ctx context.Context, actor, workspaceID string) error
}

var _ AnalystAccess = (*analystaccess.Manager)(nil)

// registerAnalysts mounts the caller's workspace's analyst access (docs/ANALYSTS.md):
//
//	POST   /api/admin/analyst-access  create it, or rotate its password (shown this once)
//	GET    /api/admin/analyst-access  the user, its database and times, never the password
//	DELETE /api/admin/analyst-access  revoke: the user and its database go
//
// They answer 409 analyst_access_not_configured where the deployment gives no users.d directory.
func (a *API) registerAnalysts(g gin.IRouter) {
	g.POST("/analyst-access", a.grantAnalyst)
	g.GET("/analyst-access", a.getAnalyst)
	g.DELETE("/analyst-access", a.revokeAnalyst)
}

func (a *API) analysts() (AnalystAccess, error) {
	if a.Analysts == nil {
		return nil, analystaccess.ErrNotConfigured
	}
	return a.Analysts, nil
}

func (a *API) grantAnalyst(c *gin.Context) {
	m, err := a.analysts()
	if err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	g, err := m.Grant(c.Request.Context(), caller.Actor(), caller.Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	status := http.StatusOK
	if g.Created {
		status = http.StatusCreated
	}
	c.JSON(status, gin.H{"analystAccess": g.Access, "password": g.Password,
		"note": "the password is shown only now; POST again to replace it"})
}

func (a *API) getAnalyst(c *gin.Context) {
	m, err := a.analysts()
	if err != nil {
		a.fail(c, err)
		return
	}
	acc, err := m.Get(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"analystAccess": acc})
}

func (a *API) revokeAnalyst(c *gin.Context) {
	m, err := a.analysts()
	if err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	if err := m.Revoke(c.Request.Context(), caller.Actor(), caller.Workspace.ID); err != nil {
		a.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
