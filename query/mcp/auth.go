package mcp

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
)

// writeError answers a request that did not pass authentication, before any MCP message is read:
// the REST API's statuses and {error, message} bodies (docs/MCP.md, "Authentication"). OAuth
// sign-in is not offered, so the challenge names no authorization server.
func writeError(c *gin.Context, err error) {
	status, code := http.StatusServiceUnavailable, "unavailable"
	msg := "temporary failure; retry with exponential backoff"
	switch {
	case errors.Is(err, controlplane.ErrInvalidKey):
		status, code = http.StatusUnauthorized, "unauthorized"
		msg = "missing, invalid or revoked key (a tracking private key stops working when its source is disabled or the key is rotated): " +
			"send a workspace API key or a tracking private key as `Authorization: Bearer <key>` (OAuth sign-in is not supported)"
		c.Header("WWW-Authenticate", `Bearer realm="revtrack"`)
	case errors.Is(err, controlplane.ErrInactiveSubs):
		status, code, msg = http.StatusForbidden, "subscription_inactive", "the workspace lacks an active subscription"
	}
	c.AbortWithStatusJSON(status, gin.H{"error": code, "message": msg})
}

// callerInfo is what a tool knows of the request that carried it.
type callerInfo struct {
	// caller is the key the endpoint authenticated, and its workspace: the tools read as it.
	caller authn.Caller
	// noCache: the request carried `Cache-Control: no-cache`, which asks each reporting read of the
	// call for an answer computed from the data, as it asks a REST request (query.NoCacheContext).
	noCache bool
}

type callerKey struct{}

func withCaller(ctx context.Context, c callerInfo) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) (callerInfo, bool) {
	c, ok := ctx.Value(callerKey{}).(callerInfo)
	return c, ok
}
