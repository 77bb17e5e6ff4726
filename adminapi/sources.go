package adminapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

type createSourceRequest struct {
	AppID          string   `json:"appId" binding:"required"`
	Name           string   `json:"name"`
	AllowedOrigins []string `json:"allowedOrigins" binding:"required"`
}

// sourceWithKey is returned when a private key is created; it is shown this once.
type sourceWithKey struct {
	Source     controlplane.Source `json:"source"`
	PrivateKey string              `json:"privateKey"`
	Note       string              `json:"note"`
}

const shownOnce = "the private key is shown once and stored only as a hash; keep it server-side"

func (a *API) listSources(c *gin.Context) {
	srcs, err := a.Store.Sources(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		a.fail(c, err)
		return
	}
	if srcs == nil {
		srcs = []controlplane.Source{}
	}
	c.JSON(http.StatusOK, gin.H{"sources": srcs})
}

func (a *API) getSource(c *gin.Context) {
	src, err := a.Store.SourceByID(c.Request.Context(), authn.From(c).Workspace.ID, c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"source": src})
}

func (a *API) createSource(c *gin.Context) {
	var req createSourceRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	src, sk, err := a.Store.CreateSource(c.Request.Context(), caller.Actor(), caller.Workspace.Slug, req.AppID, req.Name, req.AllowedOrigins)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, sourceWithKey{Source: src, PrivateKey: sk, Note: shownOnce})
}

type updateSourceRequest struct {
	Enabled        *bool    `json:"enabled"`
	AllowedOrigins []string `json:"allowedOrigins"`
}

func (a *API) updateSource(c *gin.Context) {
	var req updateSourceRequest
	if err := bind(c, &req); err != nil {
		a.fail(c, err)
		return
	}
	caller := authn.From(c)
	ctx, ws, id := c.Request.Context(), caller.Workspace.ID, c.Param("id")
	src, err := a.Store.SourceByID(ctx, ws, id)
	if err == nil && req.AllowedOrigins != nil {
		src, err = a.Store.SetSourceOrigins(ctx, caller.Actor(), ws, id, req.AllowedOrigins)
	}
	if err == nil && req.Enabled != nil && *req.Enabled != src.Enabled {
		src, err = a.Store.SetSourceEnabled(ctx, caller.Actor(), ws, id, *req.Enabled)
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"source": src})
}

// keyRetirer remembers which source a rotated-away public key named (controlplane.Store), so that
// the source's status shows the pages that still send it.
type keyRetirer interface {
	RetirePublicKey(ctx context.Context, oldPK, sourceID string) error
}

func (a *API) rotatePublic(c *gin.Context) {
	caller := authn.From(c)
	ctx, ws, id := c.Request.Context(), caller.Workspace.ID, c.Param("id")
	old, err := a.Store.SourceByID(ctx, ws, id)
	src := old
	if err == nil {
		src, err = a.Store.RotatePublicKey(ctx, caller.Actor(), ws, id)
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	if r, ok := a.Store.(keyRetirer); ok && old.PublicKey != src.PublicKey {
		if err := r.RetirePublicKey(ctx, old.PublicKey, id); err != nil {
			a.Log.Warn("rotated public key not remembered; its refusals will not show on the source's status", "source", id, "err", err)
		}
	}
	c.JSON(http.StatusOK, gin.H{"source": src})
}

func (a *API) rotatePrivate(c *gin.Context) {
	caller := authn.From(c)
	src, sk, err := a.Store.RotatePrivateKey(c.Request.Context(), caller.Actor(), caller.Workspace.ID, c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, sourceWithKey{Source: src, PrivateKey: sk, Note: shownOnce})
}
