package adminapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/uploader"
)

// AdsSetup is the advertising connection's state machine and the mapping rules (*uploader.Setup).
// Every change it makes is audited by the control plane.
type AdsSetup interface {
	Configured() bool
	DiscoveryConfigured() bool
	Connection(ctx context.Context, workspaceID string) (controlplane.AdConnection, bool, error)
	ConnectWithKey(ctx context.Context, actor, keyID, workspaceID string) (uploader.BrowserStart, error)
	ConnectWithSession(ctx context.Context, actor, userID, workspaceID string) (uploader.BrowserStart, error)
	FlowLocation() (base, cookiePath string)
	Begin(ctx context.Context, beginToken string) (uploader.Begun, error)
	BrowserCallback(ctx context.Context, state, code, binding string) (uploader.CallbackResult, error)
	ConfirmReplacement(ctx context.Context, id, binding, csrf string, replace bool) (controlplane.AdConnection, error)
	SelectAccount(ctx context.Context, actor, workspaceID, conversionCustomerID, loginCustomerID string) (uploader.AccountSelection, error)
	RefreshActions(ctx context.Context, actor, workspaceID string) ([]controlplane.AdConversionAction, error)
	ListActions(ctx context.Context, workspaceID string) ([]controlplane.AdConversionAction, error)
	Disconnect(ctx context.Context, actor, workspaceID string) (controlplane.AdConnection, error)
	CreateMapping(ctx context.Context, actor, workspaceID string, in uploader.MappingInput) (controlplane.AdMapping, error)
	ListMappings(ctx context.Context, workspaceID string) ([]controlplane.AdMapping, error)
	GetMapping(ctx context.Context, workspaceID, mappingID string) (controlplane.AdMapping, error)
	UpdateMapping(ctx context.Context, actor, workspaceID, mappingID string, u uploader.MappingUpdate) (controlplane.AdMapping, error)
	SetValidationOnly(ctx context.Context, actor, workspaceID, mappingID string, on bool) (controlplane.AdMapping, error)
}

// UploadRows lists a workspace's upload-queue rows and retries rejected ones (*uploader.Rows).
type UploadRows interface {
	List(ctx context.Context, workspaceID string, f uploader.ListFilter) (uploader.ListPage, error)
	Retry(ctx context.Context, workspaceID, rowID string) (uploader.Row, error)
}

var (
	_ AdsSetup   = (*uploader.Setup)(nil)
	_ UploadRows = (*uploader.Rows)(nil)
)

// AdsAPI serves the caller's workspace's advertising-conversion setup (docs/ADS_UPLOAD.md,
// "Surfaces"):
//
//	GET    /api/admin/ads/connection                     state, scopes, accounts, last error (never a token)
//	POST   /api/admin/ads/connection                     start connecting: {authorizationUrl} (the begin URL)
//	GET    /api/admin/ads/oauth/begin                    the browser opens it (no key): binds it to the flow, to Google
//	GET    /api/admin/ads/oauth/callback                 Google's redirect (no key: the state and the browser's cookie)
//	POST   /api/admin/ads/oauth/confirm                  replace the live Google account, or keep it (cookie + CSRF token)
//	PUT    /api/admin/ads/connection/account             select the conversion (and manager login) customer
//	DELETE /api/admin/ads/connection                     disconnect (revoke at Google)
//	GET    /api/admin/ads/conversion-actions             the cached conversion actions of the account
//	POST   /api/admin/ads/conversion-actions/refresh     list them again from Google
//	GET    /api/admin/ads/mappings                       mappings, enabled or not
//	POST   /api/admin/ads/mappings                       create a mapping
//	GET    /api/admin/ads/mappings/{id}                  one mapping
//	PATCH  /api/admin/ads/mappings/{id}                  edit, enable/disable, Validation only
//	GET    /api/admin/ads/queue                          upload-queue rows (filters, cursor pages)
//	POST   /api/admin/ads/queue/{rowId}/retry            queue a rejected row again
//	GET    /api/admin/ads/verification                   the recommended verification order, per mapping
type AdsAPI struct {
	Setup AdsSetup
	Rows  UploadRows
	// Verifier follows the verification order (ads_verify.go).
	Verifier *AdsVerifier
	// Audit records the user Retry of a row (the setup audits its own changes).
	Audit Auditor
	Log   *slog.Logger
}

// register mounts the routes on the admin group (authenticated, admin scope), and the browser's leg
// of the OAuth flow on the root: the browser carries no key; the single-use begin link, the state
// and the cookie the begin link set stand for it (ads_callback.go).
func (s *AdsAPI) register(root, g gin.IRouter, fail func(*gin.Context, error)) {
	h := adsHandlers{AdsAPI: s, fail: fail}
	root.GET(uploader.OAuthBeginPath, noStore, h.begin)
	root.GET(uploader.OAuthCallbackPath, noStore, h.callback)
	root.POST(uploader.OAuthConfirmPath, noStore, h.confirm)
	g.GET("/ads/connection", h.getConnection)
	g.POST("/ads/connection", h.connect)
	g.PUT("/ads/connection/account", h.selectAccount)
	g.DELETE("/ads/connection", h.disconnect)
	g.GET("/ads/conversion-actions", h.listActions)
	g.POST("/ads/conversion-actions/refresh", h.refreshActions)
	g.GET("/ads/mappings", h.listMappings)
	g.POST("/ads/mappings", h.createMapping)
	g.GET("/ads/mappings/:id", h.getMapping)
	g.PATCH("/ads/mappings/:id", h.patchMapping)
	g.GET("/ads/queue", h.listQueue)
	g.POST("/ads/queue/:rowId/retry", h.retryRow)
	if s.Verifier != nil {
		g.GET("/ads/verification", h.verification)
	}
}

type adsHandlers struct {
	*AdsAPI
	fail func(*gin.Context, error)
}

// ConnectionView is the connection as the API shows it: whether this deployment offers the
// connection at all, the state, and the workspace's connection (absent when it never connected).
type ConnectionView struct {
	// Configured is false when no OAuth client is configured: connecting is refused (409
	// ads_not_configured); an existing connection can still be shown and disconnected.
	Configured bool `json:"configured"`
	// AccountDiscovery says whether conversion actions can be listed from Google; when false they
	// are entered by numeric ID and name.
	AccountDiscovery bool `json:"accountDiscovery"`
	// State is connected or disconnected (also when the workspace never connected).
	State string `json:"state"`
	// Ready: connected and a conversion account selected, so mappings can upload.
	Ready      bool                       `json:"ready"`
	Connection *controlplane.AdConnection `json:"connection,omitempty"`
}

// DescribeConnection is the workspace's connection as the API (and the command line) shows it.
func DescribeConnection(ctx context.Context, setup AdsSetup, workspaceID string) (ConnectionView, error) {
	c, ok, err := setup.Connection(ctx, workspaceID)
	if err != nil {
		return ConnectionView{}, err
	}
	v := ConnectionView{Configured: setup.Configured(), AccountDiscovery: setup.DiscoveryConfigured(), State: "disconnected"}
	if ok {
		if c.GrantedScopes == nil {
			c.GrantedScopes = []string{}
		}
		v.State, v.Ready, v.Connection = c.State, c.Ready(), &c
	}
	return v, nil
}

func (h adsHandlers) getConnection(c *gin.Context) {
	v, err := DescribeConnection(c.Request.Context(), h.Setup, authn.From(c).Workspace.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// connect answers the single-use begin URL of a new flow; the caller opens it in the user's
// browser, which is sent on to Google and back to the callback, and only that browser can finish
// the flow. A connected workspace reconnects (its credential is replaced; by another Google account
// only after a confirmation). A person signed in to the console starts it with their session; the
// flow then checks their role instead of a key's scope.
func (h adsHandlers) connect(c *gin.Context) {
	caller := authn.From(c)
	var start uploader.BrowserStart
	var err error
	if caller.User != nil {
		start, err = h.Setup.ConnectWithSession(c.Request.Context(), caller.Actor(), caller.User.ID, caller.Workspace.ID)
	} else {
		start, err = h.Setup.ConnectWithKey(c.Request.Context(), caller.Actor(), caller.Principal.KeyID, caller.Workspace.ID)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"authorizationUrl": start.BeginURL, "expiresAt": start.ExpiresAt})
}

type selectAccountRequest struct {
	ConversionCustomerID string `json:"conversionCustomerId"`
	LoginCustomerID      string `json:"loginCustomerId"`
}

// selectAccount sets the conversion customer and the optional manager login customer. A change of
// either disables the workspace's enabled mappings (listed in the answer).
func (h adsHandlers) selectAccount(c *gin.Context) {
	var req selectAccountRequest
	if err := bindStrict(c, &req); err != nil {
		h.fail(c, err)
		return
	}
	caller := authn.From(c)
	sel, err := h.Setup.SelectAccount(c.Request.Context(), caller.Actor(), caller.Workspace.ID, req.ConversionCustomerID, req.LoginCustomerID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, sel)
}

// disconnect revokes the credential at Google. 200 with the disconnected connection when Google
// confirms; 502 revocation_unconfirmed otherwise, the connection staying connected.
func (h adsHandlers) disconnect(c *gin.Context) {
	caller := authn.From(c)
	conn, err := h.Setup.Disconnect(c.Request.Context(), caller.Actor(), caller.Workspace.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if conn.GrantedScopes == nil {
		conn.GrantedScopes = []string{}
	}
	c.JSON(http.StatusOK, gin.H{"connection": conn})
}

func (h adsHandlers) listActions(c *gin.Context) {
	actions, err := h.Setup.ListActions(c.Request.Context(), authn.From(c).Workspace.ID)
	h.actions(c, actions, err)
}

func (h adsHandlers) refreshActions(c *gin.Context) {
	caller := authn.From(c)
	actions, err := h.Setup.RefreshActions(c.Request.Context(), caller.Actor(), caller.Workspace.ID)
	h.actions(c, actions, err)
}

func (h adsHandlers) actions(c *gin.Context, actions []controlplane.AdConversionAction, err error) {
	if err != nil {
		h.fail(c, err)
		return
	}
	if actions == nil {
		actions = []controlplane.AdConversionAction{}
	}
	c.JSON(http.StatusOK, gin.H{"actions": actions})
}
