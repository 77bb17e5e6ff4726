package adminapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader"
)

// TestAdsQueueOverHTTP lists upload-queue rows with each filter and cursor pages, and retries
// rows: a rejected one with click evidence is queued again (audited), the others are refused with
// the reason.
func TestAdsQueueOverHTTP(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	f.insertQueue(t,
		queueRow{id: "uq_1", mapping: "map_a", status: "rejected", clickType: "gclid", clickID: "fake-CLICK_NOT_FOUND-1",
			reasons: []string{"PROCESSING_ERROR_REASON_CLICK_NOT_FOUND"}, created: base},
		queueRow{id: "uq_2", mapping: "map_a", status: "rejected", clickType: "gclid", clickID: "g-2",
			reasons: []string{uploader.ReasonEventBeforeMapping}, created: base.Add(time.Minute)},
		queueRow{id: "uq_3", mapping: "map_a", status: "unattributed", created: base.Add(2 * time.Minute)},
		queueRow{id: "uq_4", mapping: "map_b", status: "validated", clickType: "wbraid", clickID: "w-4", created: base.Add(3 * time.Minute)},
		queueRow{id: "uq_5", mapping: "map_b", status: "accepted", clickType: "gbraid", clickID: "b-5", diagnostics: "SUCCESS",
			created: base.Add(4 * time.Minute)},
	)
	ids := func(body map[string]any) string {
		var out []string
		for _, r := range body["rows"].([]any) {
			out = append(out, r.(map[string]any)["rowId"].(string))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ query, want string }{
		{"", "uq_5,uq_4,uq_3,uq_2,uq_1"},
		{"status=rejected", "uq_2,uq_1"},
		{"mappingId=map_b", "uq_5,uq_4"},
		{"status=validated&mappingId=map_b", "uq_4"},
		{"from=" + url.QueryEscape(base.Add(time.Minute).Format(time.RFC3339)) + "&to=" + url.QueryEscape(base.Add(3*time.Minute).Format(time.RFC3339)), "uq_3,uq_2"},
		{"from=" + base.Format(time.DateOnly), "uq_5,uq_4,uq_3,uq_2,uq_1"},
	} {
		status, body := f.json(t, "GET", "/api/admin/ads/queue?"+c.query, f.admin, nil)
		if status != 200 || ids(body) != c.want || body["nextCursor"] != nil {
			t.Errorf("?%s: %d %v, want %s", c.query, status, body, c.want)
		}
	}
	status, raw := f.raw(t, "GET", "/api/admin/ads/queue?mappingId=map_b", f.admin, nil)
	if status != 200 {
		t.Fatal(status)
	}
	testenv.Golden(t, "testdata/ads_queue_list.golden.json", adsNormalized(t, raw, map[string]string{f.tenant.Source.ID: "SOURCE_ID"}))

	var pages []string
	cursor := ""
	for i := 0; i < 5; i++ {
		status, body := f.json(t, "GET", "/api/admin/ads/queue?limit=2&cursor="+url.QueryEscape(cursor), f.admin, nil)
		if status != 200 {
			t.Fatalf("page %d: %d %v", i, status, body)
		}
		pages = append(pages, ids(body))
		next, _ := body["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(pages, "|") != "uq_5,uq_4|uq_3,uq_2|uq_1" {
		t.Fatalf("pages %v", pages)
	}
	for _, q := range []string{"status=sent", "limit=0", "limit=501", "from=yesterday", "to=2026-13-01", "cursor=%21%21",
		"from=2026-11-02&to=2026-11-01"} {
		if status, body := f.json(t, "GET", "/api/admin/ads/queue?"+q, f.admin, nil); status != 400 || body["error"] != "invalid_parameter" {
			t.Errorf("?%s: %d %v", q, status, body)
		}
	}

	// Retry.
	status, body := f.json(t, "POST", "/api/admin/ads/queue/uq_1/retry", f.admin, nil)
	if row := body["row"].(map[string]any); status != 200 || row["status"] != "queued" || row["attempts"] != 0.0 || len(row["reasonCodes"].([]any)) != 0 {
		t.Fatalf("retry: %d %v", status, body)
	}
	for _, c := range []struct{ row, reason string }{
		{"uq_1", uploader.RetryRefusedNotRejected}, // already queued again
		{"uq_2", uploader.RetryRefusedLocalReason},
		{"uq_3", uploader.RetryRefusedNotRejected},
		{"uq_5", uploader.RetryRefusedNotRejected},
	} {
		status, body := f.json(t, "POST", "/api/admin/ads/queue/"+c.row+"/retry", f.admin, nil)
		if status != 409 || body["error"] != "not_retryable" || body["reason"] != c.reason {
			t.Errorf("retry %s: %d %v", c.row, status, body)
		}
	}
	if status, body := f.json(t, "POST", "/api/admin/ads/queue/uq_nope/retry", f.admin, nil); status != 404 || body["error"] != "not_found" {
		t.Errorf("unknown row: %d %v", status, body)
	}
	other, _, err := f.store.CreateAPIKey(testenv.Ctx(t), "test", "other", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := f.json(t, "GET", "/api/admin/ads/queue", other, nil); status != 200 || len(body["rows"].([]any)) != 0 {
		t.Errorf("another workspace sees rows: %d %v", status, body)
	}
	if status, _ := f.json(t, "POST", "/api/admin/ads/queue/uq_4/retry", other, nil); status != 404 {
		t.Errorf("another workspace's retry: %d", status)
	}
	if status, _ := f.json(t, "POST", "/api/admin/ads/queue/uq_4/retry", f.rdr, nil); status != 403 {
		t.Errorf("read-scoped retry: %d", status)
	}
	entries, err := f.store.AuditLog(testenv.Ctx(t), f.ws, 50)
	if err != nil {
		t.Fatal(err)
	}
	var retried []string
	for _, e := range entries {
		if e.Action == "ads_upload_row.retry" {
			retried = append(retried, e.TargetID+" "+e.Details["mappingId"]+" "+e.Actor[:4])
		}
	}
	if strings.Join(retried, ";") != "uq_1 map_a key:" {
		t.Fatalf("audited retries %v", retried)
	}
}
