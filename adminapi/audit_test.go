package adminapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
)

// TestKeyLastUsed: a key's list entry says when it was last used (null before its first use), for
// a person deciding whether it can be revoked.
func TestKeyLastUsed(t *testing.T) {
	f := setup(t)
	status, body := f.call(t, "POST", "/api/admin/keys", f.admin, map[string]any{"name": "integration"})
	if status != 201 {
		t.Fatalf("create: %d %v", status, body)
	}
	created := body["key"].(map[string]any)
	if v, ok := created["lastUsedAt"]; !ok || v != nil {
		t.Fatalf("a new key's lastUsedAt is null: %v", created)
	}
	value := body["value"].(string)
	lastUsed := func() any {
		_, body := f.call(t, "GET", "/api/admin/keys", f.admin, nil)
		for _, k := range body["keys"].([]any) {
			if m := k.(map[string]any); m["id"] == created["id"] {
				return m["lastUsedAt"]
			}
		}
		t.Fatal("the new key is not listed")
		return nil
	}
	if v := lastUsed(); v != nil {
		t.Fatalf("unused key: lastUsedAt %v", v)
	}
	before := time.Now().UTC().Truncate(time.Second)
	// A read key passes the key check here, then is refused the admin route for its scope: the
	// key was used all the same.
	if status, _ := f.call(t, "GET", "/api/admin/sources", value, nil); status != 403 {
		t.Fatalf("read key on an admin route: %d", status)
	}
	v, _ := lastUsed().(string)
	at, err := time.Parse(time.RFC3339, v)
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Fatalf("lastUsedAt %q after a use at %s", v, before)
	}
	// The listing's own admin key was used too.
	_, body = f.call(t, "GET", "/api/admin/keys", f.admin, nil)
	for _, k := range body["keys"].([]any) {
		if m := k.(map[string]any); m["name"] == "ops" && m["lastUsedAt"] == nil {
			t.Errorf("the admin key in use has no lastUsedAt: %v", m)
		}
	}
}

// TestAuditFiltersAndPaging: the audit log filters by action (a name or its beginning), actor and
// dates, and pages with an opaque cursor; bad filters are 400 invalid_parameter.
func TestAuditFiltersAndPaging(t *testing.T) {
	f := setup(t)
	var ids []string
	for _, name := range []string{"first", "second", "third"} {
		_, body := f.call(t, "POST", "/api/admin/keys", f.admin, map[string]any{"name": name})
		ids = append(ids, body["key"].(map[string]any)["id"].(string))
	}
	if status, _ := f.call(t, "POST", "/api/admin/keys/"+ids[0]+"/revoke", f.admin, nil); status != 200 {
		t.Fatal("revoke")
	}
	_, keys := f.call(t, "GET", "/api/admin/keys", f.admin, nil)
	var actor string
	for _, k := range keys["keys"].([]any) {
		if m := k.(map[string]any); m["name"] == "ops" {
			actor = "key:" + m["id"].(string)
		}
	}
	get := func(q url.Values) (int, map[string]any) {
		return f.call(t, "GET", "/api/admin/audit?"+q.Encode(), f.admin, nil)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	status, body := get(url.Values{"action": {"api_key"}, "actor": {actor}, "from": {today}, "to": {today}, "limit": {"2"}})
	if status != 200 {
		t.Fatalf("audit: %d %v", status, body)
	}
	testenv.Golden(t, "testdata/audit_page.golden.json", masked(t, body, map[string]string{"at": "TIME", "workspaceId": "WORKSPACE_ID",
		"actor": "ACTOR", "targetId": "KEY_ID", "nextCursor": "CURSOR"}))
	seen := map[string]bool{}
	pages := 0
	for q := (url.Values{"action": {"api_key"}, "limit": {"2"}}); ; pages++ {
		status, body := get(q)
		if status != 200 {
			t.Fatalf("page %d: %d %v", pages, status, body)
		}
		for _, e := range body["entries"].([]any) {
			m := e.(map[string]any)
			if !strings.HasPrefix(m["action"].(string), "api_key.") {
				t.Errorf("action filter let %v through", m["action"])
			}
			k := m["action"].(string) + " " + m["targetId"].(string)
			if seen[k] {
				t.Errorf("%s on two pages", k)
			}
			seen[k] = true
		}
		next, _ := body["nextCursor"].(string)
		if next == "" {
			break
		}
		q.Set("cursor", next)
	}
	// setup's two keys, the three above and one revocation, on three pages of two.
	if len(seen) != 6 || pages != 2 {
		t.Errorf("paged through %d entries in %d pages: %v", len(seen), pages+1, seen)
	}
	for _, tc := range []struct {
		q    url.Values
		want int
	}{
		{url.Values{"action": {"api_key.revoke"}}, 1},
		{url.Values{"actor": {"key:nobody"}}, 0},
		{url.Values{"from": {time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)}}, 0},
		{url.Values{"to": {time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)}}, 0},
	} {
		if _, body := get(tc.q); len(body["entries"].([]any)) != tc.want {
			t.Errorf("%v: %d entries, want %d", tc.q, len(body["entries"].([]any)), tc.want)
		}
	}
	for _, q := range []url.Values{{"from": {"yesterday"}}, {"to": {"2026-13-01"}}, {"cursor": {"not a cursor"}},
		{"from": {"2026-02-02"}, "to": {"2026-02-01"}}} {
		if status, body := get(q); status != 400 || body["error"] != "invalid_parameter" || body["message"] == "" {
			t.Errorf("%v: %d %v", q, status, body)
		}
	}
}
