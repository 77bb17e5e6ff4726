package rediscluster

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

type edge struct {
	srv    *httptest.Server
	tenant pipeline.Tenant
	db     pipeline.DB
}

// newEdge serves the ingest edge as `revtrack serve` does, on the cluster.
func newEdge(t *testing.T, cfg ingest.Config) *edge {
	t.Helper()
	db := pipeline.Migrated(t)
	kc, p := pipeline.Topics(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	dedup := &ingest.RedisDeduper{Client: db.Redis, Prefix: db.RedisC.KeyPrefix, TTL: time.Hour, PendingTTL: 10 * time.Second}
	limiter := &ingest.RedisLimiter{Client: db.Redis, Prefix: db.RedisC.KeyPrefix}
	svc := ingest.New(cfg, ingest.Deps{ControlPlane: tenant.Store, Producer: p,
		Deduper: dedup, Limiter: limiter, Admitter: &ingest.RedisAdmitter{Limiter: limiter, Deduper: dedup},
		BrowserTopic: kc.Topic(schemas.TopicBrowserEvents), ServerTopic: kc.Topic(schemas.TopicServerEvents),
		Registry: prometheus.NewRegistry(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	svc.Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return &edge{srv: srv, tenant: tenant, db: db}
}

func (e *edge) post(t *testing.T, path string, hdr map[string]string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(b))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func (e *edge) serverEvent(t *testing.T, sk, eventID string) (int, map[string]any) {
	t.Helper()
	return e.post(t, "/api/tracking/server-events", map[string]string{"Authorization": "Bearer " + sk, "Content-Type": "application/json"},
		map[string]any{"teamSlug": "acme", "publicKey": e.tenant.Source.PublicKey, "eventId": eventID, "acquisitionId": "acq-1",
			"name": "install", "customerRef": "shop-1.myshopify.com", "occurredAt": time.Now().UTC().Format(time.RFC3339)})
}

func (e *edge) browserBatch(t *testing.T, eventID string) {
	t.Helper()
	st, b := e.post(t, "/v1/collect", map[string]string{"Origin": "https://app.example", "Content-Type": "text/plain;charset=UTF-8"},
		map[string]any{"key": e.tenant.Source.PublicKey, "batch": []any{map[string]any{"eventId": eventID, "name": "page_view",
			"occurredAt": time.Now().UTC().Format(time.RFC3339Nano), "acquisitionId": "acq-9", "sessionId": "s1",
			"url": "https://app.example/pricing", "path": "/pricing"}}})
	if st != 202 || b["accepted"] != float64(1) {
		t.Fatalf("browser batch %s: %d %v", eventID, st, b)
	}
}

// TestClusterEdge: on a Redis Cluster the edge resolves a source through the control plane (its
// caches in several slots), then admits through the one-round-trip script (edge records, rate
// window and event-ID reservation, one hash tag), deduplicates, counts the rate, accepts a browser
// batch, and sees a private-key rotation, a subscription change and expired records at once.
func TestClusterEdge(t *testing.T) {
	onCluster(t)
	cfg := ingest.DefaultConfig()
	cfg.ServerEventsPerMinute = 7
	e := newEdge(t, cfg)
	ctx := testenv.Ctx(t)
	testenv.AwayFromMinuteEdge(t, 30*time.Second)
	sk := e.tenant.PrivateKey
	want := func(step string, status int, body map[string]any, code int, duplicate any) {
		t.Helper()
		if status != code || (duplicate != nil && body["duplicate"] != duplicate) {
			t.Fatalf("%s: %d %v, want %d (duplicate %v)", step, status, body, code, duplicate)
		}
	}

	st, b := e.serverEvent(t, sk, "evt-1") // 1: through the control plane, which fills the edge records
	want("first", st, b, 202, false)
	st, b = e.serverEvent(t, sk, "evt-1") // 2: the script, the reservation confirmed by 1
	want("same event ID", st, b, 200, true)
	st, b = e.serverEvent(t, sk, "evt-2") // 3
	want("second event", st, b, 202, false)

	e.browserBatch(t, "pv-1")

	// A rotation writes the source's caches (several slots) and its edge record.
	src, newSK, err := e.tenant.Store.RotatePrivateKey(ctx, "test", e.tenant.Source.WorkspaceID, e.tenant.Source.ID)
	if err != nil {
		t.Fatal(err)
	}
	st, b = e.serverEvent(t, sk, "evt-3")
	want("rotated-away key", st, b, 401, nil)
	st, b = e.serverEvent(t, newSK, "evt-3") // 4
	want("new key", st, b, 202, false)

	// A subscription change writes the workspace's cache and edge record in one MULTI (one hash tag).
	if _, err := e.tenant.Store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusCanceled); err != nil {
		t.Fatal(err)
	}
	st, b = e.serverEvent(t, newSK, "evt-4")
	if st == 202 {
		t.Fatalf("canceled subscription: %d %v", st, b)
	}
	if _, err := e.tenant.Store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}

	// Expired edge records: the control plane's path again (the cached source, then its workspace).
	if err := e.db.Redis.Del(ctx, e.tenant.Store.EdgeSourceKey(src.WorkspaceID, src.ID), e.tenant.Store.EdgeWorkspaceKey(src.WorkspaceID)).Err(); err != nil {
		t.Fatal(err)
	}
	e.browserBatch(t, "pv-2")                // the cached source, then its workspace, in two reads (not one script)
	st, b = e.serverEvent(t, newSK, "evt-5") // 5
	want("records expired", st, b, 202, false)
	st, b = e.serverEvent(t, newSK, "evt-5") // 6
	want("records expired, same ID", st, b, 200, true)
	st, b = e.serverEvent(t, newSK, "evt-6") // 7
	want("last within the limit", st, b, 202, false)
	st, b = e.serverEvent(t, newSK, "evt-7")
	want("over the limit", st, b, 429, nil)
}
