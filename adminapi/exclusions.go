package adminapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// ExclusionStore is the part of the control plane the customer-exclusion routes use.
type ExclusionStore interface {
	CustomerExclusions(ctx context.Context, workspaceID string, withLifted bool) ([]controlplane.CustomerExclusion, error)
	ExcludeCustomer(ctx context.Context, actor, workspaceID, shopDomain, appID, reason string) (controlplane.CustomerExclusion, error)
	IncludeCustomer(ctx context.Context, actor, workspaceID, shopDomain, appID, reason string) (controlplane.CustomerExclusion, error)
}

var _ ExclusionStore = (*controlplane.Store)(nil)

// registerExclusions mounts /customer-exclusions when the store keeps exclusions (the control
// plane's does; narrower test stores may not):
//
//	GET    /api/admin/customer-exclusions[?lifted=true]           the rules in force (and lifted ones)
//	POST   /api/admin/customer-exclusions {shopDomain, appId?, reason?}   exclude a shop
//	DELETE /api/admin/customer-exclusions?shopDomain=…[&appId=…][&reason=…]   lift an exclusion
//
// An empty appId means every app. Changes are audited with the key's ID as the actor.
func (a *API) registerExclusions(g gin.IRouter) {
	s, ok := a.Store.(ExclusionStore)
	if !ok {
		return
	}
	h := exclusionHandlers{api: a, store: s}
	g.GET("/customer-exclusions", h.list)
	g.POST("/customer-exclusions", h.exclude)
	g.DELETE("/customer-exclusions", h.include)
}

type exclusionHandlers struct {
	api   *API
	store ExclusionStore
}

type excludeRequest struct {
	ShopDomain string `json:"shopDomain" binding:"required"`
	AppID      string `json:"appId"`
	Reason     string `json:"reason"`
}

func (h exclusionHandlers) list(c *gin.Context) {
	lifted := false
	if v := c.Query("lifted"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			h.api.fail(c, invalidParam("lifted must be true or false"))
			return
		}
		lifted = b
	}
	xs, err := h.store.CustomerExclusions(c.Request.Context(), authn.From(c).Workspace.ID, lifted)
	if err != nil {
		h.api.fail(c, err)
		return
	}
	if xs == nil {
		xs = []controlplane.CustomerExclusion{}
	}
	c.JSON(http.StatusOK, gin.H{"exclusions": xs})
}

func (h exclusionHandlers) exclude(c *gin.Context) {
	var req excludeRequest
	if err := bind(c, &req); err != nil {
		h.api.fail(c, err)
		return
	}
	caller := authn.From(c)
	x, err := h.store.ExcludeCustomer(c.Request.Context(), caller.Actor(), caller.Workspace.ID, req.ShopDomain, req.AppID, req.Reason)
	if err != nil {
		h.api.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"exclusion": x})
}

func (h exclusionHandlers) include(c *gin.Context) {
	domain := c.Query("shopDomain")
	if domain == "" {
		h.api.fail(c, invalidParam("the shopDomain query parameter is required"))
		return
	}
	caller := authn.From(c)
	x, err := h.store.IncludeCustomer(c.Request.Context(), caller.Actor(), caller.Workspace.ID, domain, c.Query("appId"), c.Query("reason"))
	if err != nil {
		h.api.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"exclusion": x})
}
