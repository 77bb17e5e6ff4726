package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testClient gives up on an edge that does not answer, so a hung request fails its test instead of
// stalling the run.
var testClient = &http.Client{Timeout: 30 * time.Second}

// edge is the ingest edge on the real Kafka, ClickHouse and Redis, with one workspace and source.
type edge struct {
	admitter *RedisAdmitter
	srv      *httptest.Server
	engine   *gin.Engine
	store    *controlplane.Store
	db       pipeline.DB
	kc       kafkax.Config
	producer *kgo.Client
	src      controlplane.Source
	sk       string
}

func newEdge(t *testing.T, cfg Config) *edge {
	t.Helper()
	return newEdgeWith(t, cfg, edgeOptions{})
}

// edgeOptions vary the edge of a test; the zero value is the edge as served.
type edgeOptions struct {
	// producer, when set, returns the edge's producer (default: the test's producer, straight to
	// the broker).
	producer func(kc kafkax.Config, direct *kgo.Client) Producer
	// pendingTTL of a reservation (default 10 s).
	pendingTTL time.Duration
}

func newEdgeWith(t *testing.T, cfg Config, o edgeOptions) *edge {
	t.Helper()
	db := pipeline.Migrated(t)
	kc, p := pipeline.Topics(t)
	tenant := pipeline.Seed(t, db, "https://app.example", "http://127.0.0.1:5173")
	store, src, sk, rdb, rc := tenant.Store, tenant.Source, tenant.PrivateKey, db.Redis, db.RedisC
	if o.pendingTTL == 0 {
		o.pendingTTL = 10 * time.Second
	}
	var producer Producer = p
	if o.producer != nil {
		producer = o.producer(kc, p)
	}
	dedup := &RedisDeduper{Client: rdb, Prefix: rc.KeyPrefix, TTL: time.Hour, PendingTTL: o.pendingTTL}
	limiter := &RedisLimiter{Client: rdb, Prefix: rc.KeyPrefix}
	svc := New(cfg, Deps{ControlPlane: store, Producer: producer,
		Deduper: dedup, Limiter: limiter, Admitter: &RedisAdmitter{Limiter: limiter, Deduper: dedup},
		BrowserTopic: kc.Topic(schemas.TopicBrowserEvents), ServerTopic: kc.Topic(schemas.TopicServerEvents),
		Registry: prometheus.NewRegistry(), Log: quiet})
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	svc.Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return &edge{admitter: &RedisAdmitter{Limiter: limiter, Deduper: dedup}, srv: srv, engine: engine, store: store, db: db, kc: kc,
		producer: p, src: src, sk: sk}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (e *edge) do(t *testing.T, method, path string, hdr map[string]string, body []byte) reply {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return reply{resp.StatusCode, resp.Header, m}
}

func (e *edge) serverEvent(t *testing.T, key string, fields map[string]any) reply {
	t.Helper()
	hdr := map[string]string{"Content-Type": "application/json"}
	if key != "" {
		hdr["Authorization"] = "Bearer " + key
	}
	return e.do(t, http.MethodPost, "/api/tracking/server-events", hdr, e.serverEventBody(fields))
}

// serverEventBody is a valid server event of the edge's source with fields replaced (nil removes).
func (e *edge) serverEventBody(fields map[string]any) []byte {
	base := map[string]any{"teamSlug": "acme", "publicKey": e.src.PublicKey, "eventId": "evt-" + testenv.ID(),
		"acquisitionId": "acq-1", "name": "install", "customerRef": "shop-1.myshopify.com", "occurredAt": time.Now().UTC().Format(time.RFC3339)}
	for k, v := range fields {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, _ := json.Marshal(base)
	return b
}

// records reads a topic from the start until it holds want records (or 30 s pass), then keeps
// reading for another second so that an unexpected extra record is caught too.
func (e *edge) records(t *testing.T, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.Brokers...), kgo.ConsumeTopics(e.kc.Topic(topic)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	extra, cancelExtra := context.WithTimeout(context.Background(), time.Second)
	defer cancelExtra()
	for extra.Err() == nil {
		out = append(out, cl.PollFetches(extra).Records()...)
	}
	return out
}

func errCode(r reply) string { s, _ := r.body["error"].(string); return s }

func TestServerEventAcceptedOnceAndDuplicateAnswered(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	fields := map[string]any{"eventId": "paid-1", "name": "paid", "amountCents": 4900, "currency": "USD"}
	first := e.serverEvent(t, e.sk, fields)
	if first.status != http.StatusAccepted || first.body["duplicate"] != false || first.body["accepted"] != true {
		t.Fatalf("first: %d %v", first.status, first.body)
	}
	again := e.serverEvent(t, e.sk, fields)
	if again.status != http.StatusOK || again.body["duplicate"] != true {
		t.Fatalf("repeat: %d %v", again.status, again.body)
	}
	recs := e.records(t, schemas.TopicServerEvents, 1)
	if len(recs) != 1 {
		t.Fatalf("%d records in Kafka, want 1", len(recs))
	}
	var ev schemas.ServerEvent
	if err := json.Unmarshal(recs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.SourceID != e.src.ID || ev.WorkspaceID != e.src.WorkspaceID || ev.AppID != "app-1" || *ev.AmountCents != 4900 ||
		string(recs[0].Key) != e.src.ID+":acq-1" || ev.Validate() != nil {
		t.Fatalf("record %s: %+v", recs[0].Key, ev)
	}
}

// A workspace API key authorizes ingestion too (docs/TRACKING.md, section 4): only its own
// workspace's sources, and only while it is not revoked.
func TestServerEventWorkspaceKey(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	key, k, err := e.store.CreateAPIKey(ctx, "test", "acme", "ingestion", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, key, nil); r.status != http.StatusAccepted {
		t.Fatalf("workspace key: %d %v", r.status, r.body)
	}
	if _, err := e.store.CreateWorkspace(ctx, "test", "other", "Other", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	otherKey, _, err := e.store.CreateAPIKey(ctx, "test", "other", "ingestion", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"acme", "other"} {
		if r := e.serverEvent(t, otherKey, map[string]any{"teamSlug": team}); r.status != 401 || errCode(r) != "unauthorized" {
			t.Errorf("another workspace's key, team %s: %d %v", team, r.status, r.body)
		}
	}
	if _, err := e.store.RevokeAPIKey(ctx, "test", k.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, key, nil); r.status != 401 || errCode(r) != "unauthorized" {
		t.Errorf("revoked workspace key: %d %v", r.status, r.body)
	}
}

func TestServerEventErrors(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	cases := []struct {
		name   string
		key    string
		fields map[string]any
		status int
		code   string
	}{
		{"no key", "", nil, 401, "unauthorized"},
		{"unknown workspace key", "revtrack_sk_abc", nil, 401, "unauthorized"},
		{"wrong private key", "tracker_sk_" + strings.Repeat("0", 64), nil, 401, "unauthorized"},
		{"wrong team", e.sk, map[string]any{"teamSlug": "other"}, 401, "unauthorized"},
		{"unknown public key", e.sk, map[string]any{"publicKey": "tracker_pk_nope"}, 401, "tracking_source_unavailable"},
		{"bad name", e.sk, map[string]any{"name": "purchase"}, 400, "invalid_parameter"},
		{"paid without amount", e.sk, map[string]any{"name": "paid"}, 400, "invalid_parameter"},
		{"bad time", e.sk, map[string]any{"occurredAt": "yesterday"}, 400, "invalid_parameter"},
		{"no event id", e.sk, map[string]any{"eventId": nil}, 400, "invalid_parameter"},
	}
	for _, tc := range cases {
		r := e.serverEvent(t, tc.key, tc.fields)
		if r.status != tc.status || errCode(r) != tc.code || r.body["message"] == "" {
			t.Errorf("%s: %d %v, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
	hdr := map[string]string{"Authorization": "Bearer " + e.sk}
	if r := e.do(t, "POST", "/api/tracking/server-events", hdr, []byte("{not json")); r.status != 400 || errCode(r) != "invalid_body" {
		t.Errorf("malformed JSON: %d %v", r.status, r.body)
	}
	big := bytes.Repeat([]byte("x"), 20<<10)
	if r := e.do(t, "POST", "/api/tracking/server-events", hdr, big); r.status != 413 || errCode(r) != "payload_too_large" {
		t.Errorf("oversized: %d %v", r.status, r.body)
	}

	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, false); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 401 || errCode(r) != "tracking_source_unavailable" {
		t.Errorf("disabled source: %d %v", r.status, r.body)
	}
	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 403 || errCode(r) != "subscription_inactive" {
		t.Errorf("inactive subscription: %d %v", r.status, r.body)
	}
	if _, err := e.store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	_, sk2, err := e.store.RotatePrivateKey(ctx, "test", e.src.WorkspaceID, e.src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 401 || errCode(r) != "unauthorized" {
		t.Errorf("rotated private key: %d %v", r.status, r.body)
	}
	if r := e.serverEvent(t, sk2, nil); r.status != 202 {
		t.Errorf("new private key: %d %v", r.status, r.body)
	}
	if n := len(e.records(t, schemas.TopicServerEvents, 1)); n != 1 {
		t.Errorf("%d records in Kafka after the error cases, want only the last accepted one", n)
	}
}

func TestServerEventRateLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ServerEventsPerMinute = 3
	e := newEdge(t, cfg)
	testenv.AwayFromMinuteEdge(t, 20*time.Second)
	for i := range 3 {
		if r := e.serverEvent(t, e.sk, nil); r.status != 202 {
			t.Fatalf("request %d: %d %v", i, r.status, r.body)
		}
	}
	r := e.serverEvent(t, e.sk, nil)
	if r.status != 429 || errCode(r) != "rate_limited" || r.header.Get("Retry-After") != "60" {
		t.Fatalf("over the limit: %d %v %v", r.status, r.header, r.body)
	}
}

// TestFailedWriteIsNotADuplicate makes the Kafka write fail for real (the topic does not exist yet):
// the answer is 503, and once the topic exists the client's retry of the same eventId is accepted as
// new, not reported as a duplicate.
func TestFailedWriteIsNotADuplicate(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	adm := kadm.NewClient(e.producer)
	topic := e.kc.Topic(schemas.TopicServerEvents)
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, _ := adm.ListTopics(ctx, topic)
		if _, ok := d[topic]; !ok || d[topic].Err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("topic not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fields := map[string]any{"eventId": "retry-me"}
	r := e.serverEvent(t, e.sk, fields)
	if r.status != 503 || errCode(r) != "unavailable" || r.header.Get("Retry-After") == "" {
		t.Fatalf("write to a missing topic: %d %v", r.status, r.body)
	}
	if err := bootstrap.EnsureTopics(ctx, e.producer, e.kc); err != nil {
		t.Fatal(err)
	}
	var retry reply
	for time.Now().Before(deadline.Add(20 * time.Second)) {
		if retry = e.serverEvent(t, e.sk, fields); retry.status != 503 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if retry.status != 202 || retry.body["duplicate"] != false {
		t.Fatalf("retry after the failure: %d %v", retry.status, retry.body)
	}
}

func collectBody(key string, events ...map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"key": key, "batch": events})
	return b
}

func pageView(id string) map[string]any {
	return map[string]any{"eventId": id, "name": "page_view", "occurredAt": time.Now().UTC().Format(time.RFC3339Nano),
		"acquisitionId": "acq-9", "sessionId": "s1", "url": "https://app.example/pricing?hmac=x&utm_source=ads", "path": "/pricing",
		"firstTouch": map[string]any{"utmSource": "ads", "gclid": "g-1", "landingUrl": "https://app.example/?code=c"}}
}

func TestCollectBrowserBatch(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	origin := map[string]string{"Origin": "https://app.example", "Content-Type": "text/plain;charset=UTF-8"}

	// The preflight has no body, so no key and no source: it allows the request without credentials,
	// for any origin alike.
	for _, o := range []string{"https://app.example", "https://evil.example"} {
		pre := e.do(t, http.MethodOptions, "/v1/collect", map[string]string{"Origin": o,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, nil)
		if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != "*" ||
			pre.header.Get("Access-Control-Allow-Credentials") != "" || pre.header.Get("Access-Control-Allow-Methods") == "" {
			t.Fatalf("preflight from %s: %d %v", o, pre.status, pre.header)
		}
	}

	bad := map[string]any{"eventId": "e-bad", "name": "no spaces allowed", "occurredAt": "x", "acquisitionId": "acq-9"}
	r := e.do(t, "POST", "/v1/collect", origin, collectBody(e.src.PublicKey, pageView("e-1"), bad, pageView("e-2")))
	if r.status != 202 || r.body["accepted"] != float64(2) || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		r.header.Get("Access-Control-Allow-Credentials") != "true" || r.header.Get("Access-Control-Expose-Headers") != "Retry-After" {
		t.Fatalf("batch: %d %v %v", r.status, r.header, r.body)
	}
	rej := r.body["rejected"].([]any)
	if len(rej) != 1 || rej[0].(map[string]any)["index"] != float64(1) {
		t.Fatalf("rejected: %v", rej)
	}
	recs := e.records(t, schemas.TopicBrowserEvents, 2)
	if len(recs) != 2 {
		t.Fatalf("%d browser records, want 2", len(recs))
	}
	var ev schemas.BrowserEvent
	_ = json.Unmarshal(recs[0].Value, &ev)
	if ev.URL != "https://app.example/pricing?utm_source=ads" || ev.FirstTouch.LandingURL != "https://app.example/" ||
		ev.SourceID != e.src.ID || ev.AppID != "app-1" || ev.Validate() != nil {
		t.Fatalf("record: %+v", ev)
	}

	// Every refusal is readable by the page (tracker.js stops on 401 and 403 instead of retrying),
	// but only an allowed origin gets its origin echoed with credentials; before the origin is known
	// to be allowed, and when it is not, the answer is "*" without credentials.
	for name, tc := range map[string]struct {
		hdr    map[string]string
		body   []byte
		status int
		code   string
		echo   bool
	}{
		"other origin":    {map[string]string{"Origin": "https://evil.example"}, collectBody(e.src.PublicKey, pageView("x")), 403, "origin_not_allowed", false},
		"port mismatch":   {map[string]string{"Origin": "https://app.example:8443"}, collectBody(e.src.PublicKey, pageView("x")), 403, "origin_not_allowed", false},
		"scheme mismatch": {map[string]string{"Origin": "http://app.example"}, collectBody(e.src.PublicKey, pageView("x")), 403, "origin_not_allowed", false},
		"no origin":       {map[string]string{}, collectBody(e.src.PublicKey, pageView("x")), 403, "origin_not_allowed", false},
		"unknown key":     {origin, collectBody("tracker_pk_nope", pageView("x")), 401, "tracking_source_unavailable", false},
		"not json":        {origin, []byte("{"), 400, "invalid_body", false},
		"empty batch":     {origin, collectBody(e.src.PublicKey), 400, "invalid_parameter", true},
		"too large":       {origin, bytes.Repeat([]byte(" "), 70<<10), 413, "payload_too_large", false},
	} {
		r := e.do(t, "POST", "/v1/collect", tc.hdr, tc.body)
		if r.status != tc.status || errCode(r) != tc.code {
			t.Errorf("%s: %d %v, want %d %s", name, r.status, r.body, tc.status, tc.code)
		}
		acao, acac := r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Access-Control-Allow-Credentials")
		switch o := tc.hdr["Origin"]; {
		case o == "":
			if acao != "" || acac != "" {
				t.Errorf("%s: CORS headers without an Origin: %v", name, r.header)
			}
		case tc.echo && (acao != o || acac != "true"):
			t.Errorf("%s: allowed origin not echoed with credentials: %q %q", name, acao, acac)
		case !tc.echo && (acao != "*" || acac != ""):
			t.Errorf("%s: refusal must be readable without credentials, got %q %q", name, acao, acac)
		}
		if o := tc.hdr["Origin"]; o != "" && r.header.Get("Access-Control-Expose-Headers") != "Retry-After" {
			t.Errorf("%s: Retry-After not exposed", name)
		}
	}

	rotated, err := e.store.RotatePublicKey(testenv.Ctx(t), "test", e.src.WorkspaceID, e.src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(t, "POST", "/v1/collect", origin, collectBody(e.src.PublicKey, pageView("x"))); r.status != 401 || errCode(r) != "tracking_source_unavailable" {
		t.Errorf("rotated public key: %d %v", r.status, r.body)
	}
	if r := e.do(t, "POST", "/v1/collect", origin, collectBody(rotated.PublicKey, pageView("e-3"))); r.status != 202 {
		t.Errorf("new public key: %d %v", r.status, r.body)
	}
}

func TestTrackerScriptServed(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	resp, err := http.Get(e.srv.URL + "/v1/tracker.js")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") ||
		resp.Header.Get("Cache-Control") == "" || resp.Header.Get("ETag") == "" || len(b) == 0 {
		t.Fatalf("%d %v %d bytes", resp.StatusCode, resp.Header, len(b))
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1/tracker.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d", again.StatusCode)
	}
}

// TestConcurrentSameEventID: while one request holds an eventId (its Kafka write in flight), a second
// request with the same ID is told to retry (503 event_in_progress), not answered as a duplicate of an
// event that may yet fail; only the holder's release frees it, and then the retry is accepted as new.
func TestConcurrentSameEventID(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	scope := newEdgeRef(nil, e.src.ID, e.src.WorkspaceID).scope // the scope the edge reserves IDs in
	// Its own limit key, in the scope's slot (the hash tag) as the script needs.
	ok, state, err := e.admitter.Admit(ctx, "other:"+scope, Limit{N: 10, Window: time.Minute}, scope, "held-1", "holder")
	if err != nil || !ok || state != stateNew {
		t.Fatalf("admit: %v %v %v", ok, state, err)
	}
	r := e.serverEvent(t, e.sk, map[string]any{"eventId": "held-1"})
	if r.status != 503 || errCode(r) != "event_in_progress" {
		t.Fatalf("while held: %d %v", r.status, r.body)
	}
	if err := e.admitter.Deduper.Release(ctx, scope, "held-1", "another request"); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, map[string]any{"eventId": "held-1"}); r.status != 503 || errCode(r) != "event_in_progress" {
		t.Fatalf("after a release by another request: %d %v", r.status, r.body)
	}
	if err := e.admitter.Deduper.Release(ctx, scope, "held-1", "holder"); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, map[string]any{"eventId": "held-1"}); r.status != 202 || r.body["duplicate"] != false {
		t.Fatalf("after release: %d %v", r.status, r.body)
	}
}
