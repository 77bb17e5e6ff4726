package adminapi_test

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestAdsMappingsOverHTTP creates, lists, edits, toggles Validation only, disables and re-enables
// a mapping, with the refusals of each rule and the audit entries of each change.
func TestAdsMappingsOverHTTP(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	src := f.tenant.Source.ID
	valid := map[string]any{"sourceId": src, "milestone": "paid", "conversionActionId": "7723667020", "consentConfirmed": true}

	if status, body := f.json(t, "POST", "/api/admin/ads/mappings", f.admin, valid); status != 409 || body["error"] != "conflict" {
		t.Fatalf("mapping before connecting: %d %v", status, body)
	}
	f.ready(t)
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range valid {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for name, req := range map[string]any{
		"no consent":           with("consentConfirmed", false),
		"identified":           with("milestone", "identified"),
		"resource name":        with("conversionActionId", "customers/1234567890/conversionActions/7723667020"),
		"unknown source":       with("sourceId", "src_nope"),
		"value, no currency":   with("fixedValueCents", 1000),
		"misspelt field":       with("validation_only", false),
		"not an object":        "[]",
		"no source":            with("sourceId", nil),
		"currency not ISO":     map[string]any{"sourceId": src, "milestone": "paid", "conversionActionId": "7723667020", "consentConfirmed": true, "fixedValueCents": 100, "fixedCurrency": "dollars"},
		"negative fixed cents": map[string]any{"sourceId": src, "milestone": "paid", "conversionActionId": "7723667020", "consentConfirmed": true, "fixedValueCents": -5, "fixedCurrency": "USD"},
	} {
		want := "invalid_parameter"
		if name == "misspelt field" || name == "not an object" { // not the operation's JSON
			want = "invalid_body"
		}
		if status, body := f.json(t, "POST", "/api/admin/ads/mappings", f.admin, req); status != 400 || body["error"] != want || body["message"] == "" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	status, raw := f.raw(t, "POST", "/api/admin/ads/mappings", f.admin, with("fixedValueCents", 1250))
	if status != 400 {
		t.Fatalf("fixed value without currency: %d %s", status, raw)
	}
	req := with("fixedValueCents", 1250)
	req["fixedCurrency"] = "EUR"
	status, raw = f.raw(t, "POST", "/api/admin/ads/mappings", f.admin, req)
	if status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	var id string
	if _, body := f.json(t, "GET", "/api/admin/ads/mappings", f.admin, nil); len(body["mappings"].([]any)) == 1 {
		id = body["mappings"].([]any)[0].(map[string]any)["mappingId"].(string)
	} else {
		t.Fatalf("list: %v", body)
	}
	ids := map[string]string{id: "MAPPING_ID", src: "SOURCE_ID"}
	testenv.Golden(t, "testdata/ads_mapping_created.golden.json", adsNormalized(t, raw, ids))
	if status, body := f.json(t, "POST", "/api/admin/ads/mappings", f.admin, req); status != 409 || !strings.Contains(body["message"].(string), id) {
		t.Fatalf("duplicate mapping: %d %v", status, body)
	}

	status, raw = f.raw(t, "GET", "/api/admin/ads/mappings", f.admin, nil)
	if status != 200 {
		t.Fatal(status)
	}
	testenv.Golden(t, "testdata/ads_mappings_list.golden.json", adsNormalized(t, raw, ids))
	if status, _ := f.json(t, "GET", "/api/admin/ads/mappings/map_nope", f.admin, nil); status != 404 {
		t.Errorf("unknown mapping: %d", status)
	}
	other, _, err := f.store.CreateAPIKey(testenv.Ctx(t), "test", "other", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := f.json(t, "GET", "/api/admin/ads/mappings/"+id, other, nil); status != 404 {
		t.Errorf("another workspace's mapping: %d", status)
	}
	if status, _ := f.json(t, "PATCH", "/api/admin/ads/mappings/"+id, other, map[string]any{"validationOnly": false}); status != 404 {
		t.Errorf("another workspace's patch: %d", status)
	}

	path := "/api/admin/ads/mappings/" + id
	for name, body := range map[string]any{
		"empty":          map[string]any{},
		"source changes": map[string]any{"sourceId": "src_other"},
		"milestone":      map[string]any{"milestone": "install"},
		"consent off":    map[string]any{"consentConfirmed": false},
		"resource name":  map[string]any{"conversionActionId": "customers/1/conversionActions/2"},
	} {
		if status, resp := f.json(t, "PATCH", path, f.admin, body); status != 400 || resp["error"] != "invalid_parameter" {
			t.Errorf("patch %s: %d %v", name, status, resp)
		} else if name == "source changes" && !strings.Contains(resp["message"].(string), "never change") {
			t.Errorf("patch %s: %v", name, resp)
		}
	}

	// Validation only is on by default; turning it off is its own audited change.
	status, body := f.json(t, "PATCH", path, f.admin, map[string]any{"validationOnly": false})
	if status != 200 || body["mapping"].(map[string]any)["validationOnly"] != false {
		t.Fatalf("validation only off: %d %v", status, body)
	}
	if !strings.HasPrefix(f.auditActions(t)["ads_mapping.validation_only"], "key:") {
		t.Fatalf("the validation-mode change is not audited: %v", f.auditActions(t))
	}

	// Edit and Validation only together: both apply.
	status, body = f.json(t, "PATCH", path, f.admin, map[string]any{"conversionActionId": "7723667021", "clearFixedValue": true, "validationOnly": true})
	m := body["mapping"].(map[string]any)
	if status != 200 || m["conversionActionId"] != "7723667021" || m["conversionActionName"] == "" || m["fixedValueCents"] != nil ||
		m["validationOnly"] != true {
		t.Fatalf("edit: %d %v", status, body)
	}

	status, body = f.json(t, "PATCH", path, f.admin, map[string]any{"enabled": false})
	if m := body["mapping"].(map[string]any); status != 200 || m["enabled"] != false || !strings.Contains(m["disabledReason"].(string), "key:") ||
		m["disabledCause"] != "user" {
		t.Fatalf("disable: %d %v", status, body)
	}
	status, body = f.json(t, "PATCH", path, f.admin, map[string]any{"enabled": true})
	if m := body["mapping"].(map[string]any); status != 200 || m["enabled"] != true || m["disabledReason"] != nil || m["disabledCause"] != nil {
		t.Fatalf("enable: %d %v", status, body)
	}

	// Selecting another account disables the mappings of the previous one.
	status, body = f.json(t, "PUT", "/api/admin/ads/connection/account", f.admin, map[string]any{"conversionCustomerId": googlefake.DefaultManagerID})
	if status != 200 || len(body["disabledMappings"].([]any)) != 1 {
		t.Fatalf("account change: %d %v", status, body)
	}
	if _, body := f.json(t, "GET", path, f.admin, nil); body["mapping"].(map[string]any)["enabled"] != false ||
		body["mapping"].(map[string]any)["disabledCause"] != "account_change" {
		t.Fatalf("mapping of the previous account still enabled: %v", body)
	}
	// It cannot be re-enabled, not even after going back to the previous account: its queued rows
	// were meant for an account the connection no longer names.
	f.json(t, "PUT", "/api/admin/ads/connection/account", f.admin,
		map[string]any{"conversionCustomerId": googlefake.DefaultCustomerID, "loginCustomerId": googlefake.DefaultManagerID})
	status, body = f.json(t, "PATCH", path, f.admin, map[string]any{"enabled": true})
	if msg, _ := body["message"].(string); status != 409 || body["error"] != "conflict" || !strings.Contains(msg, "create a new mapping") {
		t.Fatalf("re-enable after an account change: %d %v", status, body)
	}
	if _, body := f.json(t, "GET", "/api/admin/ads/verification", f.admin, nil); len(body["mappings"].([]any)) != 1 ||
		!strings.Contains(body["mappings"].([]any)[0].(map[string]any)["blocker"].(string), "create a new mapping") {
		t.Fatalf("verification of a retired mapping: %v", body)
	}

	actions := f.auditActions(t)
	for _, want := range []string{"ads_mapping.create", "ads_mapping.update", "ads_mapping.validation_only", "ads_mapping.disable", "ads_mapping.enable"} {
		if !strings.HasPrefix(actions[want], "key:") {
			t.Errorf("audit lacks %s by the key (%v)", want, actions)
		}
	}
}
