package adminapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// PartnerStore is the part of the control plane the partner-connection routes use
// (*controlplane.Partners). The token goes in, sealed; no method gives it back.
type PartnerStore interface {
	ConnectPartner(ctx context.Context, actor, slug, orgID, accessToken string) (controlplane.PartnerConnection, error)
	DescribePartner(ctx context.Context, workspaceID string) (controlplane.PartnerConnection, error)
	DisconnectPartner(ctx context.Context, actor, slug string) error
}

var _ PartnerStore = (*controlplane.Partners)(nil)

// SyncAPI serves the caller's workspace's partner connection and platform sync runs:
//
//	PUT    /api/admin/partner-connection  connect or replace (the token is never echoed back)
//	GET    /api/admin/partner-connection  the connection, without the token
//	DELETE /api/admin/partner-connection  disconnect
//	POST   /api/admin/sync-runs           start runs now (202; they go on in the background)
//	GET    /api/admin/sync-runs           recent runs
type SyncAPI struct {
	Partners PartnerStore
	Syncs    SyncService
	Runs     RunReader
	Audit    Auditor
	Log      *slog.Logger
}

// register mounts the routes on the admin group (authenticated, admin scope).
func (s *SyncAPI) register(g gin.IRouter, fail func(*gin.Context, error)) {
	h := syncHandlers{SyncAPI: s, fail: fail}
	g.PUT("/partner-connection", h.putPartner)
	g.GET("/partner-connection", h.getPartner)
	g.DELETE("/partner-connection", h.deletePartner)
	g.POST("/sync-runs", h.startRuns)
	g.GET("/sync-runs", h.listRuns)
}

type syncHandlers struct {
	*SyncAPI
	fail func(*gin.Context, error)
}

type putPartnerRequest struct {
	OrganizationID string `json:"organizationId" binding:"required"`
	AccessToken    string `json:"accessToken" binding:"required"`
	// APIBaseURL is refused when set: where the partner API is, is the operator's setting
	// (--partner-api-base-url). A workspace-set address let a tenant aim the sync, with its stored
	// token, at internal services.
	APIBaseURL *string `json:"apiBaseUrl"`
}

var errPartnerURLNotSettable = invalidParam("apiBaseUrl cannot be set by a workspace: " +
	"the partner API address is the operator's setting (--partner-api-base-url); omit the field")

func (h syncHandlers) putPartner(c *gin.Context) {
	var req putPartnerRequest
	if err := bind(c, &req); err != nil {
		h.fail(c, err)
		return
	}
	if req.APIBaseURL != nil {
		h.fail(c, errPartnerURLNotSettable)
		return
	}
	caller := authn.From(c)
	conn, err := h.Partners.ConnectPartner(c.Request.Context(), caller.Actor(), caller.Workspace.Slug, req.OrganizationID, req.AccessToken)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"partnerConnection": conn})
}

func (h syncHandlers) getPartner(c *gin.Context) {
	conn, err := h.Partners.DescribePartner(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"partnerConnection": conn})
}

func (h syncHandlers) deletePartner(c *gin.Context) {
	caller := authn.From(c)
	if err := h.Partners.DisconnectPartner(c.Request.Context(), caller.Actor(), caller.Workspace.Slug); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
