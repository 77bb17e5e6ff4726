package mcp

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// writeError answers a request that did not pass authentication, before any MCP message is read:
// codes of the API's closed list (internal/httpserver/apierror) in the REST API's {error, message}
// bodies (docs/MCP.md, "Authentication"). OAuth sign-in is not offered, so the challenge names no
// authorization server.
func writeError(c *gin.Context, err error) {
	ae := apierror.New(apierror.Unavailable, "temporary failure; retry with exponential backoff")
	switch {
	case errors.Is(err, controlplane.ErrInvalidKey):
		ae = apierror.New(apierror.Unauthorized, "missing, invalid or revoked key (a tracking private key stops working when its source is disabled or the key is rotated): "+
			"send a workspace API key or a tracking private key as `Authorization: Bearer <key>` (OAuth sign-in is not supported)")
		c.Header("WWW-Authenticate", `Bearer realm="revtrack"`)
	case errors.Is(err, controlplane.ErrInactiveSubs):
		ae = apierror.New(apierror.SubscriptionInactive, "the workspace lacks an active subscription")
	}
	apierror.Write(c, ae)
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
