package adminapi_test

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// stable replaces the per-run values of an exclusion body (workspace ID, timestamps) so it can be
// compared with a golden file.
func stable(t *testing.T, body map[string]any) []byte {
	t.Helper()
	return masked(t, body, map[string]string{"workspaceId": "WORKSPACE_ID", "updatedAt": "TIME"})
}

func TestCustomerExclusionsOverHTTP(t *testing.T) {
	f := setup(t)
	const path = "/api/admin/customer-exclusions"
	if status, body := f.call(t, "GET", path, f.rdr, nil); status != 403 || body["error"] != "forbidden" {
		t.Fatalf("read-scoped key: %d %v", status, body)
	}
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"reason": "no domain"}, "invalid_parameter"},
		{map[string]any{"shopDomain": "not a domain"}, "invalid_parameter"},
		{map[string]any{"shopDomain": "alpha.myshopify.com", "appId": "app-9"}, "invalid_parameter"},
		{"[]", "invalid_body"},
	} {
		if status, body := f.call(t, "POST", path, f.admin, tc.body); status != 400 || body["error"] != tc.want || body["message"] == "" {
			t.Errorf("POST %v: %d %v", tc.body, status, body)
		}
	}

	status, body := f.call(t, "POST", path, f.admin, map[string]any{"shopDomain": "https://Alpha.myshopify.com/", "reason": "our development store"})
	if status != 200 {
		t.Fatalf("exclude: %d %v", status, body)
	}
	testenv.Golden(t, "testdata/exclusion_created.golden.json", stable(t, body))
	if status, body := f.call(t, "POST", path, f.admin, map[string]any{"shopDomain": "beta.myshopify.com", "appId": "app-1", "reason": "partner store"}); status != 200 {
		t.Fatalf("exclude for one app: %d %v", status, body)
	}
	status, body = f.call(t, "GET", path, f.admin, nil)
	if status != 200 {
		t.Fatalf("list: %d %v", status, body)
	}
	testenv.Golden(t, "testdata/exclusions_list.golden.json", stable(t, body))

	if status, body := f.call(t, "DELETE", path+"?shopDomain=alpha.myshopify.com&appId=app-1", f.admin, nil); status != 404 ||
		body["error"] != "not_found" || !strings.Contains(body["message"].(string), "every app") {
		t.Fatalf("lift one app of an every-app exclusion: %d %v", status, body)
	}
	if status, body := f.call(t, "DELETE", path, f.admin, nil); status != 400 || body["error"] != "invalid_parameter" {
		t.Fatalf("lift without a domain: %d %v", status, body)
	}
	status, body = f.call(t, "DELETE", path+"?shopDomain=alpha.myshopify.com&reason=sold", f.admin, nil)
	if x, _ := body["exclusion"].(map[string]any); status != 200 || x["excluded"] != false || x["reason"] != "sold" {
		t.Fatalf("lift: %d %v", status, body)
	}
	if status, body := f.call(t, "GET", path+"?lifted=maybe", f.admin, nil); status != 400 {
		t.Fatalf("lifted=maybe: %d %v", status, body)
	}
	status, body = f.call(t, "GET", path+"?lifted=true", f.admin, nil)
	if status != 200 {
		t.Fatalf("list with lifted: %d %v", status, body)
	}
	testenv.Golden(t, "testdata/exclusions_list_lifted.golden.json", stable(t, body))

	// Another workspace's admin sees none of acme's rules.
	otherAdmin, _, err := f.store.CreateAPIKey(testenv.Ctx(t), "test", "other", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := f.call(t, "GET", path+"?lifted=true", otherAdmin, nil); status != 200 || len(body["exclusions"].([]any)) != 0 {
		t.Fatalf("other workspace: %d %v", status, body)
	}

	// Every change is audited with the key as the actor.
	_, audit := f.call(t, "GET", "/api/admin/audit?limit=50", f.admin, nil)
	var got []string
	for _, e := range audit["entries"].([]any) {
		e := e.(map[string]any)
		if e["targetType"] == "customer_exclusion" {
			if !strings.HasPrefix(e["actor"].(string), "key:") {
				t.Errorf("actor %v", e["actor"])
			}
			got = append(got, e["action"].(string)+" "+e["targetId"].(string))
		}
	}
	want := "customer.include alpha.myshopify.com,customer.exclude beta.myshopify.com,customer.exclude alpha.myshopify.com"
	if strings.Join(got, ",") != want {
		t.Fatalf("audit %v, want %s", got, want)
	}
}
