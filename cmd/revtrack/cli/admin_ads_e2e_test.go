package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// TestAdsUploadEndToEnd runs `revtrack all` against the fake Google and follows the verification
// order (docs/ADS_UPLOAD.md, "Surfaces") through the real pipeline: connect through the served OAuth
// callback, select the account, map `paid`, track a click and a verified event, see the row
// validated, turn Validation only off, send a new event and see it accepted.
func TestAdsUploadEndToEnd(t *testing.T) {
	fake := googlefake.New(googlefake.DefaultConfig())
	google := httptest.NewServer(fake)
	t.Cleanup(google.Close)
	db := pipeline.Migrated(t)
	kc := testenv.KafkaConfig(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	admin, _, err := tenant.Store.CreateAPIKey(testenv.Ctx(t), "test", "acme", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	app := runapp.Start(t, kc, db.CH, db.RedisC, "--ads-google-base-url", google.URL, "--ads-oauth-client-id", "revtrack-local",
		"--ads-oauth-client-secret", "revtrack-local-secret", "--ads-dispatch-interval", "200ms")
	e := e2e{base: app.URL(), pk: tenant.Source.PublicKey, sk: tenant.PrivateKey, sourceID: tenant.Source.ID}
	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, e.base+path, rd)
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}

	status, body := call("POST", "/api/admin/ads/connection", nil)
	if status != 200 {
		t.Fatalf("connect: %d %v", status, body)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The browser: the begin link (which sets the flow's cookie), Google, then the served callback.
	resp, err := (&http.Client{Jar: jar}).Get(body["authorizationUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Connected") {
		t.Fatalf("callback: %d %s", resp.StatusCode, page)
	}
	if status, body := call("PUT", "/api/admin/ads/connection/account", map[string]any{"conversionCustomerId": googlefake.DefaultCustomerID,
		"loginCustomerId": googlefake.DefaultManagerID}); status != 200 {
		t.Fatalf("select account: %d %v", status, body)
	}
	status, body = call("POST", "/api/admin/ads/mappings", map[string]any{"sourceId": e.sourceID, "milestone": "paid",
		"conversionActionId": "7723667021", "consentConfirmed": true})
	if status != 201 {
		t.Fatalf("mapping: %d %v", status, body)
	}
	mapping := body["mapping"].(map[string]any)["mappingId"].(string)

	// A visit from an ad click, then verified payments of its acquisition.
	now := time.Now().UTC()
	if s := e.post(t, "/v1/collect", map[string]string{"Origin": "https://app.example"}, map[string]any{"key": e.pk, "batch": []any{
		map[string]any{"eventId": "b-ads-1", "name": "page_view", "occurredAt": now.Format(time.RFC3339Nano), "acquisitionId": "acq-ads",
			"url": "https://app.example/?gclid=click-ads-1", "path": "/",
			"firstTouch": map[string]any{"gclid": "click-ads-1", "landingUrl": "https://app.example/?gclid=click-ads-1"}}}}); s != 202 {
		t.Fatalf("collect: %d", s)
	}
	paid := func(id string) {
		t.Helper()
		if s := e.post(t, "/api/tracking/server-events", map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"},
			map[string]any{"teamSlug": "acme", "publicKey": e.pk, "eventId": id, "acquisitionId": "acq-ads", "name": "paid",
				"customerRef": "shop-ads.myshopify.com", "occurredAt": time.Now().UTC().Format(time.RFC3339Nano), "amountCents": 2900, "currency": "USD"}); s != 202 {
			t.Fatalf("server event %s: %d", id, s)
		}
	}
	next := func(want string) {
		t.Helper()
		var last map[string]any
		deadline := time.Now().Add(45 * time.Second)
		for time.Now().Before(deadline) {
			_, v := call("GET", "/api/admin/ads/verification?mappingId="+mapping, nil)
			last = v
			if ms, _ := v["mappings"].([]any); len(ms) == 1 && ms[0].(map[string]any)["next"] == want {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("verification never reached %s: %v", want, last)
	}
	// The verification order: the page view is seen before the verified event is sent. The matcher waits
	// only briefly for browser events still on their way, and a loaded CI host can take longer.
	next("verified_event")
	paid("s-ads-1")
	next("validation_only_off")
	if status, body := call("PATCH", "/api/admin/ads/mappings/"+mapping, map[string]any{"validationOnly": false}); status != 200 {
		t.Fatalf("validation only off: %d %v", status, body)
	}
	paid("s-ads-2")
	next("platform_confirmed")

	status, body = call("GET", "/api/admin/ads/queue?mappingId="+mapping, nil)
	rows, _ := body["rows"].([]any)
	if status != 200 || len(rows) != 2 {
		t.Fatalf("queue: %d %v", status, body)
	}
	got := map[string]bool{}
	for _, r := range rows {
		row := r.(map[string]any)
		got[row["status"].(string)+"/"+row["clickId"].(string)] = true
	}
	if !got["validated/click-ads-1"] || !got["accepted/click-ads-1"] {
		t.Fatalf("rows %v", rows)
	}
	var ingests, live int
	for _, r := range fake.Requests() {
		if !strings.HasSuffix(r.Path, "events:ingest") {
			continue
		}
		ingests++
		if bytes.Contains(r.Body, []byte("shop-ads")) {
			t.Errorf("an upload carried the shop: %s", r.Body)
		}
		if !bytes.Contains(r.Body, []byte(`"validateOnly":true`)) {
			live++
		}
	}
	if ingests != 2 || live != 1 {
		t.Fatalf("%d ingests, %d live", ingests, live)
	}
}
