package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

var sessionRe = regexp.MustCompile(`"sessionId": "([^"]+)"`)

type e2e struct {
	base, apiKey, pk, sk, sourceID string
}

func startAll(t *testing.T) e2e {
	t.Helper()
	db := pipeline.Migrated(t)
	kc := testenv.KafkaConfig(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	key, _, err := tenant.Store.CreateAPIKey(testenv.Ctx(t), "test", "acme", "reporting", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	app := runapp.Start(t, kc, db.CH, db.RedisC)
	return e2e{base: app.URL(), apiKey: key, pk: tenant.Source.PublicKey, sk: tenant.PrivateKey, sourceID: tenant.Source.ID}
}

func (e e2e) post(t *testing.T, path string, hdr map[string]string, body any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.base+path, bytes.NewReader(b))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (e e2e) get(t *testing.T, path, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET %s: responses must not be cached", path)
	}
	return resp.StatusCode, b
}

// TestTrackingEndToEnd goes through the whole pipeline: browser batch and server events over HTTP,
// Kafka, the processors, ClickHouse, and back out of the reporting API.
func TestTrackingEndToEnd(t *testing.T) {
	e := startAll(t)
	// A fixed hour of a recent day: inside the retention window, and the same shape every run, so the
	// bodies can be golden files once the dates are replaced.
	day := time.Now().UTC().Add(-72 * time.Hour).Truncate(24 * time.Hour).Add(10 * time.Hour)
	at := func(m int) string { return day.Add(time.Duration(m) * time.Minute).Format(time.RFC3339Nano) }
	page := func(id string, m int) map[string]any {
		return map[string]any{"eventId": id, "name": "page_view", "occurredAt": at(m), "acquisitionId": "acq-e2e",
			"url": "https://app.example/pricing?hmac=secret", "path": "/pricing",
			"firstTouch": map[string]any{"trackerRef": "partner-7", "utmCampaign": "launch", "gclid": "click-1", "landingUrl": "https://app.example/?gclid=click-1"}}
	}
	if s := e.post(t, "/v1/collect", map[string]string{"Origin": "https://app.example"},
		map[string]any{"key": e.pk, "batch": []any{page("b-1", 0), page("b-2", 1)}}); s != 202 {
		t.Fatalf("collect: %d", s)
	}
	bearer := map[string]string{"Authorization": "Bearer " + e.sk, "Content-Type": "application/json"}
	server := func(id, name string, m int, extra map[string]any) int {
		body := map[string]any{"teamSlug": "acme", "publicKey": e.pk, "eventId": id, "acquisitionId": "acq-e2e", "name": name,
			"customerRef": "shop-e2e.myshopify.com", "occurredAt": at(m)}
		for k, v := range extra {
			body[k] = v
		}
		return e.post(t, "/api/tracking/server-events", bearer, body)
	}
	if server("s-install", "install", 5, nil) != 202 || server("s-identified", "identified", 6, nil) != 202 {
		t.Fatal("server events refused")
	}
	money := map[string]any{"amountCents": 2900, "currency": "USD"}
	if server("s-paid", "paid", 7, money) != 202 || server("s-paid", "paid", 7, money) != 200 {
		t.Fatal("paid, or its duplicate, answered wrongly")
	}
	if server("s-refund", "refunded", 8, map[string]any{"amountCents": 900, "currency": "USD"}) != 202 {
		t.Fatal("refund refused")
	}

	from, to := day.Format(time.DateOnly), day.Add(24*time.Hour).Format(time.DateOnly)
	rng := "from=" + from + "&to=" + to
	var events []byte
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := e.get(t, "/api/v1/tracking/events?"+rng, e.apiKey)
		var r struct{ Events []json.RawMessage }
		_ = json.Unmarshal(body, &r)
		if status == 200 && len(r.Events) == 6 {
			events = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events never all arrived: %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	normalize := func(b []byte) []byte {
		var v any
		_ = json.Unmarshal(b, &v)
		out, _ := json.MarshalIndent(v, "", "  ")
		s := strings.ReplaceAll(string(out), e.sourceID, "<source-id>")
		s = strings.ReplaceAll(s, from, "<from>")
		s = strings.ReplaceAll(s, to, "<to>")
		s = strings.ReplaceAll(s, day.Add(48*time.Hour).Format(time.DateOnly), "<to+1>")
		// Session IDs derive from the (random) source ID; both page views must share one.
		sessions := sessionRe.FindAllStringSubmatch(s, -1)
		for _, m := range sessions {
			if m[1] != sessions[0][1] {
				t.Errorf("page views of one visit got different sessions: %v", sessions)
			}
		}
		s = sessionRe.ReplaceAllString(s, `"sessionId": "<session-id>"`)
		return append([]byte(s), '\n')
	}
	testenv.Golden(t, "testdata/tracking_events.golden.json", normalize(events))

	_, ledger := e.get(t, "/api/v1/tracking/ledger?"+rng, e.apiKey)
	testenv.Golden(t, "testdata/tracking_ledger.golden.json", normalize(ledger))
	_, funnel := e.get(t, "/api/v1/tracking/funnel?groupBy=tracker_ref&"+rng, e.apiKey)
	testenv.Golden(t, "testdata/tracking_funnel.golden.json", normalize(funnel))

	status, body := e.get(t, fmt.Sprintf("/api/v1/tracking/sources/%s/status?%s", e.sourceID, rng), e.apiKey)
	var st struct {
		PageViews       struct{ Count int }
		LifecycleEvents struct{ Count int }
		Conditions      []struct {
			Code     string
			Detected bool
		}
	}
	if err := json.Unmarshal(body, &st); status != 200 || err != nil || st.PageViews.Count != 2 || st.LifecycleEvents.Count != 4 {
		t.Fatalf("status: %d %s", status, body)
	}
	for _, c := range st.Conditions {
		if c.Detected {
			t.Errorf("condition %s detected on a working source", c.Code)
		}
	}

	for path, want := range map[string]int{
		"/api/v1/tracking/events?from=yesterday":                400,
		"/api/v1/tracking/events?limit=500":                     400,
		"/api/v1/tracking/funnel?groupBy=country":               400,
		"/api/v1/tracking/sources/not-a-source/status":          404,
		"/api/v1/tracking/events?sourceId=someone-elses-source": 404,
		"/api/v1/tracking/ledger?from=2026-01-02&to=2026-01-01": 400,
	} {
		if status, body := e.get(t, path, e.apiKey); status != want || !bytes.Contains(body, []byte(`"message"`)) {
			t.Errorf("%s: %d %s, want %d", path, status, body, want)
		}
	}
	for _, key := range []string{"", "revtrack_sk_wrong"} {
		if status, _ := e.get(t, "/api/v1/tracking/events", key); status != 401 {
			t.Errorf("key %q: %d", key, status)
		}
	}
	// The tracking private key reads MCP data only (docs/API.md, "Keys"), not the REST API.
	if status, _ := e.get(t, "/api/v1/tracking/ledger?"+rng, e.sk); status != 403 {
		t.Errorf("private key on REST: %d, want 403", status)
	}
}
