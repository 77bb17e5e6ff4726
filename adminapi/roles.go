package adminapi

import (
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// Access is who may call an admin route.
type Access int

// The levels, weakest first. Public routes authenticate themselves (sign-in, one-time links, the
// browser's leg of the Google connection); Account routes need a signed-in person and no
// workspace; the roles are a member's role in the workspace the request acts in.
const (
	Public Access = iota
	Account
	Member
	Admin
	Owner
)

func (a Access) String() string {
	return [...]string{"public", "signed-in", "member", "admin", "owner"}[a]
}

var roleRank = map[string]Access{controlplane.RoleMember: Member, controlplane.RoleAdmin: Admin, controlplane.RoleOwner: Owner}

// RouteAccess is THE table of who may call each admin route ("METHOD path" as gin registers it).
// docs/SECURITY.md "Roles" prints the same table; TestEveryAdminRouteHasARole fails on a
// registered route missing from it, and a session on a route missing from it is refused. Admin
// keys keep their scope rule: every workspace route needs an admin-scoped key (RequireAdmin).
// member reads; admin also manages keys, tracking sources, ads, the partner connection, exclusions
// and starts syncs; owner also members, invitations, password resets and analyst access.
var RouteAccess = map[string]Access{
	"POST /api/admin/session":                        Public,
	"POST /api/admin/invitations/accept":             Public,
	"POST /api/admin/password-resets/complete":       Public,
	"GET /api/admin/ads/oauth/begin":                 Public,
	"GET /api/admin/ads/oauth/callback":              Public,
	"POST /api/admin/ads/oauth/confirm":              Public,
	"GET /api/admin/session":                         Account,
	"DELETE /api/admin/session":                      Account,
	"PUT /api/admin/account":                         Account,
	"PUT /api/admin/account/password":                Account,
	"GET /api/admin/sources":                         Member,
	"POST /api/admin/sources":                        Admin,
	"GET /api/admin/sources/:id":                     Member,
	"PATCH /api/admin/sources/:id":                   Admin,
	"POST /api/admin/sources/:id/rotate-public-key":  Admin,
	"POST /api/admin/sources/:id/rotate-private-key": Admin,
	"GET /api/admin/keys":                            Member,
	"POST /api/admin/keys":                           Admin,
	"POST /api/admin/keys/:id/revoke":                Admin,
	"GET /api/admin/audit":                           Admin,
	"GET /api/admin/customer-exclusions":             Member,
	"POST /api/admin/customer-exclusions":            Admin,
	"DELETE /api/admin/customer-exclusions":          Admin,
	"GET /api/admin/analyst-access":                  Member,
	"POST /api/admin/analyst-access":                 Owner,
	"DELETE /api/admin/analyst-access":               Owner,
	"GET /api/admin/partner-connection":              Member,
	"PUT /api/admin/partner-connection":              Admin,
	"DELETE /api/admin/partner-connection":           Admin,
	"GET /api/admin/sync-runs":                       Member,
	"POST /api/admin/sync-runs":                      Admin,
	"GET /api/admin/ads/connection":                  Member,
	"POST /api/admin/ads/connection":                 Admin,
	"PUT /api/admin/ads/connection/account":          Admin,
	"DELETE /api/admin/ads/connection":               Admin,
	"GET /api/admin/ads/conversion-actions":          Member,
	"POST /api/admin/ads/conversion-actions/refresh": Admin,
	"GET /api/admin/ads/mappings":                    Member,
	"POST /api/admin/ads/mappings":                   Admin,
	"GET /api/admin/ads/mappings/:id":                Member,
	"PATCH /api/admin/ads/mappings/:id":              Admin,
	"GET /api/admin/ads/queue":                       Member,
	"POST /api/admin/ads/queue/:rowId/retry":         Admin,
	"GET /api/admin/ads/verification":                Member,
	"GET /api/admin/members":                         Member,
	"PUT /api/admin/members/:userId":                 Owner,
	"DELETE /api/admin/members/:userId":              Owner,
	"POST /api/admin/invitations":                    Owner,
	"POST /api/admin/password-resets":                Owner,
}

// ErrRole refuses a session whose role in the workspace is below the route's.
func errRole(need Access, have string) *apierror.Error {
	return apierror.New(apierror.Forbidden, "this operation needs the "+need.String()+" role in this workspace; yours is "+have)
}

var errNoRule = apierror.New(apierror.Forbidden, "this route has no role rule, so no session may call it")

// requireAccess enforces RouteAccess on the workspace routes: a session's role must reach the
// route's level (a route missing from the table is refused); a key must be admin-scoped, as
// before sessions existed.
func requireAccess(onError func(*gin.Context, error)) gin.HandlerFunc {
	keys := authn.RequireAdmin(onError)
	return func(c *gin.Context) {
		caller := authn.From(c)
		if caller.User == nil {
			keys(c)
			return
		}
		need, ok := RouteAccess[c.Request.Method+" "+c.FullPath()]
		switch {
		case !ok || need < Member:
			onError(c, errNoRule)
		case roleRank[caller.Role] < need:
			onError(c, errRole(need, caller.Role))
		default:
			c.Next()
			return
		}
		c.Abort()
	}
}

// adminKeyNeedsOwner: an admin-scoped key passes every workspace route, owner routes included, so
// only an owner's session may create one; an admin's would be a way to become an owner.
func adminKeyNeedsOwner(caller authn.Caller, scope string) error {
	if caller.User != nil && scope == controlplane.ScopeAdmin && roleRank[caller.Role] < Owner {
		return apierror.New(apierror.Forbidden, "an admin-scoped key can do everything an owner can: creating one needs the owner role; create a read-scoped key")
	}
	return nil
}
