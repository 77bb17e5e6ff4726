package adminapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestAdsVerificationOverHTTP follows the verification order (docs/ADS_UPLOAD.md, "Surfaces") for
// one mapping as the evidence arrives: page view, verified event, queue row with click evidence,
// validated, Validation only off, live upload, platform diagnostics.
func TestAdsVerificationOverHTTP(t *testing.T) {
	f := newAdsFixture(t, googlefake.DefaultConfig(), true)
	const path = "/api/admin/ads/verification"
	status, body := f.json(t, "GET", path, f.admin, nil)
	if status != 200 || body["hint"] == nil || len(body["mappings"].([]any)) != 0 {
		t.Fatalf("before connecting: %d %v", status, body)
	}
	f.ready(t)
	paid := f.createMapping(t, "paid")
	install := f.createMapping(t, "install")
	src := f.tenant.Source.ID
	ids := map[string]string{paid: "PAID_MAPPING_ID", install: "INSTALL_MAPPING_ID", src: "SOURCE_ID"}
	next := func(mappingID string) (string, map[string]any) {
		t.Helper()
		status, body := f.json(t, "GET", path+"?mappingId="+mappingID, f.admin, nil)
		if status != 200 || len(body["mappings"].([]any)) != 1 {
			t.Fatalf("verification of %s: %d %v", mappingID, status, body)
		}
		m := body["mappings"].([]any)[0].(map[string]any)
		return m["next"].(string), m
	}
	status, raw := f.raw(t, "GET", path, f.admin, nil)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_verification_start.golden.json", adsNormalized(t, raw, ids))
	if status, _ := f.json(t, "GET", path+"?mappingId=map_nope", f.admin, nil); status != 404 {
		t.Errorf("unknown mapping: %d", status)
	}

	now := time.Now().UTC().Truncate(time.Second)
	insert(t, f.db, "browser_events", []string{"event_id", "source_id", "workspace_id", "app_id", "acquisition_id", "name", "occurred_at", "received_at"},
		[]any{"b1", src, f.ws, "app-1", "acq-1", "page_view", now.Add(-2 * time.Hour), now.Add(-2 * time.Hour)})
	if n, _ := next(paid); n != "verified_event" {
		t.Fatalf("after a page view: next %s", n)
	}
	// An event before the mapping does not count: it is never uploaded.
	server := []string{"event_id", "source_id", "workspace_id", "app_id", "acquisition_id", "name", "occurred_at", "received_at"}
	insert(t, f.db, "server_events", server, []any{"s0", src, f.ws, "app-1", "acq-1", "paid", now.Add(-time.Hour), now})
	if n, m := next(paid); n != "verified_event" {
		t.Fatalf("an event before the mapping counted: %v", m)
	}
	insert(t, f.db, "server_events", server, []any{"s1", src, f.ws, "app-1", "acq-1", "paid", now.Add(time.Second), now.Add(time.Second)})
	if n, _ := next(paid); n != "queue_row" {
		t.Fatalf("after a verified event: next %s", n)
	}
	f.insertQueue(t, queueRow{id: "uq_u", mapping: paid, status: "unattributed", created: now})
	if n, _ := next(paid); n != "queue_row" {
		t.Fatalf("an unattributed row counted as click evidence: next %s", n)
	}
	f.insertQueue(t, queueRow{id: "uq_v", mapping: paid, status: "queued", clickType: "gclid", clickID: "g-1", created: now.Add(time.Second)})
	if n, _ := next(paid); n != "validated" {
		t.Fatalf("after a queued row: next %s", n)
	}
	f.insertQueue(t, queueRow{id: "uq_v", mapping: paid, status: "validated", clickType: "gclid", clickID: "g-1", created: now.Add(time.Second)})
	if n, _ := next(paid); n != "validation_only_off" {
		t.Fatalf("after validation: next %s", n)
	}
	if status, body := f.json(t, "PATCH", "/api/admin/ads/mappings/"+paid, f.admin, map[string]any{"validationOnly": false}); status != 200 {
		t.Fatalf("validation only off: %d %v", status, body)
	}
	if n, _ := next(paid); n != "live_event" {
		t.Fatalf("after Validation only off: next %s", n)
	}
	f.insertQueue(t, queueRow{id: "uq_l", mapping: paid, status: "accepted", clickType: "gclid", clickID: "g-2", diagnostics: "PROCESSING",
		created: now.Add(2 * time.Second)})
	if n, _ := next(paid); n != "platform_confirmed" {
		t.Fatalf("after a live upload: next %s", n)
	}
	f.insertQueue(t, queueRow{id: "uq_l", mapping: paid, status: "accepted", clickType: "gclid", clickID: "g-2", diagnostics: "SUCCESS",
		created: now.Add(2 * time.Second)})
	if n, m := next(paid); n != "" {
		t.Fatalf("after diagnostics: next %s %v", n, m)
	}
	status, raw = f.raw(t, "GET", path, f.admin, nil)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	testenv.Golden(t, "testdata/ads_verification_done.golden.json", adsNormalized(t, raw, ids))

	// A newer live upload whose diagnostics the disconnection cut off: the last step says that its
	// outcome is unknown instead of "processing".
	f.insertQueue(t, queueRow{id: "uq_l2", mapping: paid, status: "accepted", clickType: "gclid", clickID: "g-3", diagnostics: "OUTCOME_UNKNOWN",
		created: now.Add(3 * time.Second)})
	n, m := next(paid)
	last := m["steps"].([]any)[6].(map[string]any)
	if n != "platform_confirmed" || last["diagnosticsStatus"] != "OUTCOME_UNKNOWN" || last["rowId"] != "uq_l2" ||
		!strings.Contains(last["hint"].(string), "disconnected before the platform's diagnostics") {
		t.Fatalf("after an upload whose outcome is unknown: next %s %v", n, last)
	}
}
