package adminapi_test

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
)

// adminRoutes are the /api/admin routes as `revtrack all` registers them, every optional part
// mounted (as query's TestOpenAPIDescribesEveryRoute mounts them).
func adminRoutes(t *testing.T) []gin.RouteInfo {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	(&adminapi.API{Store: (*controlplane.Store)(nil), Sync: &adminapi.SyncAPI{}, Console: &adminapi.Console{},
		Ads: &adminapi.AdsAPI{Verifier: &adminapi.AdsVerifier{}}}).Register(e)
	var out []gin.RouteInfo
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/admin/") {
			out = append(out, r)
		}
	}
	return out
}

// TestEveryAdminRouteHasARole: every registered admin route is in adminapi.RouteAccess, the one
// table sessions are held to (a route missing from it is refused to every session), and the table
// names no route that is not registered.
func TestEveryAdminRouteHasARole(t *testing.T) {
	routes := adminRoutes(t)
	registered := map[string]bool{}
	for _, r := range routes {
		k := r.Method + " " + r.Path
		registered[k] = true
		if _, ok := adminapi.RouteAccess[k]; !ok {
			t.Errorf("%s is registered but not in adminapi.RouteAccess (roles.go) nor in docs/SECURITY.md \"Roles\"", k)
		}
	}
	for k := range adminapi.RouteAccess {
		if !registered[k] {
			t.Errorf("adminapi.RouteAccess names %s, which is not registered", k)
		}
	}
	if len(routes) < 40 {
		t.Errorf("only %d admin routes: the optional parts were not mounted", len(routes))
	}
}

// TestRoleMatrix: for every workspace route of the table, each role's session is let through
// exactly when its role reaches the route's (refused: 403 forbidden naming the role needed; let
// through: anything but that refusal, since the fixture leaves some handlers' dependencies out),
// and an admin-scoped key is let through everywhere as before.
func TestRoleMatrix(t *testing.T) {
	env := setupPeople(t, nil)
	roles := map[string]adminapi.Access{memberEmail: adminapi.Member, adminEmail: adminapi.Admin, ownerEmail: adminapi.Owner}
	sessions := map[string]*signedIn{}
	for email := range roles {
		sessions[email] = env.signIn(t, email)
	}
	keys := make([]string, 0, len(adminapi.RouteAccess))
	for k := range adminapi.RouteAccess {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	checked := 0
	for _, k := range keys {
		need := adminapi.RouteAccess[k]
		if need < adminapi.Member {
			continue
		}
		method, path, _ := strings.Cut(k, " ")
		path = strings.NewReplacer(":id", "x", ":rowId", "x", ":userId", "x").Replace(path)
		for email, have := range roles {
			st, body, _ := sessions[email].do(t, method, path, map[string]any{})
			code, msg := "", ""
			if body != nil {
				code, msg = refusal(body)
			}
			refused := st == http.StatusForbidden && code == "forbidden" && strings.Contains(msg, "role")
			if want := have < need; refused != want {
				t.Errorf("%s as %s (route needs %s): %d %v; want refused=%v", k, email, need, st, body, want)
			}
			checked++
		}
		resp, raw := env.request(t, method, path, map[string]any{}, "Authorization", "Bearer "+env.adminKey)
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("%s with an admin key: %d %s", k, resp.StatusCode, raw)
		}
	}
	t.Logf("%d route × role combinations", checked)
}

// TestRolesTableInSecurityDoc: docs/SECURITY.md "Roles" prints adminapi.RouteAccess, row for row.
func TestRolesTableInSecurityDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(GET|POST|PUT|PATCH|DELETE) (/api/admin[^`]*)` \\| ([a-z-]+) \\|$")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]+" "+m[2]] = m[3]
	}
	for k, need := range adminapi.RouteAccess {
		if documented[k] != need.String() {
			t.Errorf("%s: docs/SECURITY.md says %q, adminapi.RouteAccess %q", k, documented[k], need)
		}
	}
	if len(documented) != len(adminapi.RouteAccess) {
		t.Errorf("docs/SECURITY.md lists %d routes, adminapi.RouteAccess %d", len(documented), len(adminapi.RouteAccess))
	}
}
