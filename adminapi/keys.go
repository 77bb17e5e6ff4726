package adminapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

type createKeyRequest struct {
	Name  string `json:"name" binding:"required"`
	Scope string `json:"scope"`
}

func (a *API) listKeys(c *gin.Context) {
	keys, err := a.Store.APIKeys(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	if keys == nil {
		keys = []controlplane.APIKey{}
	}
	c.JSON(http.StatusOK, gin.H{"keys": keys})
}

func (a *API) createKey(c *gin.Context) {
	var req createKeyRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	if req.Scope == "" {
		req.Scope = controlplane.ScopeRead
	}
	caller := authn.From(c)
	if err := adminKeyNeedsOwner(caller, req.Scope); err != nil {
		a.fail(c, err)
		return
	}
	plain, k, err := a.Store.CreateAPIKey(c.Request.Context(), caller.Actor(), caller.Workspace.Slug, req.Name, req.Scope)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"key": k, "value": plain, "note": "the key is shown once and stored only as a hash"})
}

func (a *API) revokeKey(c *gin.Context) {
	caller := authn.From(c)
	keys, err := a.Store.APIKeys(c.Request.Context(), caller.Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	found := false
	for _, k := range keys {
		found = found || k.ID == c.Param("id")
	}
	if !found {
		a.fail(c, controlplane.ErrNotFound)
		return
	}
	k, err := a.Store.RevokeAPIKey(c.Request.Context(), caller.Actor(), c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"key": k})
}
