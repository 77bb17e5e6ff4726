package ingest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// commandLog records the Redis commands sent outside pipelines while it is on.
type commandLog struct {
	mu   sync.Mutex
	on   bool
	cmds []string
}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.mu.Lock()
		if l.on {
			l.cmds = append(l.cmds, cmd.Name())
		}
		l.mu.Unlock()
		return next(ctx, cmd)
	}
}

// waitRefusalsRecorded waits until no refusal is being recorded in the background.
func waitRefusalsRecorded(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(refusalSlots) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("refusal recordings still running after 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *commandLog) record(f func()) []string {
	l.mu.Lock()
	l.on, l.cmds = true, nil
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.cmds
}

// TestServerEventOneRoundTrip: once a source's public key resolved, a server event costs the edge
// one Redis command (the admission script; the confirm goes later, in a pipeline). A caller
// without the private key, or with another team's slug, is refused before the count and does not
// spend the source's limit. When the records are gone (their TTL), the request resolves through
// the control plane, is admitted as before and creates them again.
func TestServerEventOneRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ServerEventsPerMinute = 4
	e := newEdge(t, cfg)
	ctx := testenv.Ctx(t)
	testenv.AwayFromMinuteEdge(t, 30*time.Second)
	log := &commandLog{}
	e.db.Redis.AddHook(log)
	if err := edgeScript.Load(testenv.Ctx(t), e.db.Redis).Err(); err != nil { // else EVALSHA, then EVAL once
		t.Fatal(err)
	}

	if r := e.serverEvent(t, e.sk, nil); r.status != 202 { // 1: resolves through the control plane
		t.Fatalf("first: %d %v", r.status, r.body)
	}
	var r reply
	cmds := log.record(func() { r = e.serverEvent(t, e.sk, nil) }) // 2
	if r.status != 202 || len(cmds) != 1 || cmds[0] != "evalsha" {
		t.Fatalf("second: %d %v, Redis commands %v, want one evalsha", r.status, r.body, cmds)
	}
	for i := range 5 {
		if r := e.serverEvent(t, "tracker_sk_"+strings.Repeat("0", 64), nil); r.status != 401 || errCode(r) != "unauthorized" {
			t.Fatalf("wrong private key %d: %d %v", i, r.status, r.body)
		}
		if r := e.serverEvent(t, e.sk, map[string]any{"teamSlug": "other"}); r.status != 401 || errCode(r) != "unauthorized" {
			t.Fatalf("wrong team %d: %d %v", i, r.status, r.body)
		}
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 202 { // 3: the refusals counted nothing
		t.Fatalf("after refused callers: %d %v", r.status, r.body)
	}

	ref := newEdgeRef(e.store, e.src.ID, e.src.WorkspaceID)
	if err := e.db.Redis.Del(ctx, ref.sourceKey, ref.workspaceKey).Err(); err != nil {
		t.Fatal(err)
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 202 { // 4: through the control plane again
		t.Fatalf("records expired: %d %v", r.status, r.body)
	}
	if n, err := e.db.Redis.Exists(ctx, ref.sourceKey, ref.workspaceKey).Result(); err != nil || n != 2 {
		t.Fatalf("records not filled again: %d %v", n, err)
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 429 || errCode(r) != "rate_limited" { // 5: one count for all paths
		t.Fatalf("over the limit: %d %v", r.status, r.body)
	}
}

// TestOneRoundTripSeesChangesAtOnce: after the edge learnt a source, every change the control plane
// makes applies to the next request: disabling, the subscription, the selected apps, rotating
// either key (TestServerEventErrors and TestCollectBrowserBatch check the same through the edge's
// first requests too).
func TestOneRoundTripSeesChangesAtOnce(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	want := func(step, key string, fields map[string]any, status int, code string) {
		t.Helper()
		r := e.serverEvent(t, key, fields)
		if r.status != status || (code != "" && errCode(r) != code) {
			t.Fatalf("%s: %d %v, want %d %s", step, r.status, r.body, status, code)
		}
	}
	want("learn", e.sk, nil, 202, "")
	if _, err := e.store.SetSelectedApps(ctx, "test", "acme", []string{}); err != nil {
		t.Fatal(err)
	}
	want("app deselected", e.sk, nil, 403, "app_not_selected")
	if _, err := e.store.SetSelectedApps(ctx, "test", "acme", []string{"app-1"}); err != nil {
		t.Fatal(err)
	}
	want("app selected again", e.sk, nil, 202, "")
	if _, err := e.store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusPastDue); err != nil {
		t.Fatal(err)
	}
	want("past due", e.sk, nil, 403, "subscription_inactive")
	if _, err := e.store.SetSubscriptionStatus(ctx, "test", "acme", controlplane.StatusTrialing); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, false); err != nil {
		t.Fatal(err)
	}
	want("disabled", e.sk, nil, 401, "tracking_source_unavailable")
	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, true); err != nil {
		t.Fatal(err)
	}
	want("enabled, trialing", e.sk, nil, 202, "")
	_, sk2, err := e.store.RotatePrivateKey(ctx, "test", e.src.WorkspaceID, e.src.ID)
	if err != nil {
		t.Fatal(err)
	}
	want("old private key", e.sk, nil, 401, "unauthorized")
	want("new private key", sk2, nil, 202, "")
	rotated, err := e.store.RotatePublicKey(ctx, "test", e.src.WorkspaceID, e.src.ID)
	if err != nil {
		t.Fatal(err)
	}
	want("old public key", sk2, nil, 401, "tracking_source_unavailable")
	want("new public key", sk2, map[string]any{"publicKey": rotated.PublicKey}, 202, "")
	want("invalid event, new key", sk2, map[string]any{"publicKey": rotated.PublicKey, "name": "nope"}, 400, "invalid_parameter")
}

// TestCollectOneRoundTrip: a known source's browser batch costs one Redis command, and batches from
// an origin the source does not allow are refused (readable, without credentials) before the count.
func TestCollectOneRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BrowserRequestsPerMinute = 2
	e := newEdge(t, cfg)
	testenv.AwayFromMinuteEdge(t, 20*time.Second)
	log := &commandLog{}
	e.db.Redis.AddHook(log)
	if err := edgeScript.Load(testenv.Ctx(t), e.db.Redis).Err(); err != nil { // else EVALSHA, then EVAL once
		t.Fatal(err)
	}
	allowed := map[string]string{"Origin": "https://app.example"}
	if r := e.do(t, "POST", "/v1/collect", allowed, collectBody(e.src.PublicKey, pageView("b-1"))); r.status != 202 {
		t.Fatalf("first: %d %v", r.status, r.body)
	}
	for i, o := range []string{"https://evil.example", "https://app.example:443", "", "https://APP.example"} {
		r := e.do(t, "POST", "/v1/collect", map[string]string{"Origin": o}, collectBody(e.src.PublicKey, pageView("x")))
		if r.status != 403 || errCode(r) != "origin_not_allowed" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("origin %d %q: %d %v %v", i, o, r.status, r.header, r.body)
		}
	}
	waitRefusalsRecorded(t) // their recordings (off the request's path) are Redis commands too
	var r reply
	cmds := log.record(func() { r = e.do(t, "POST", "/v1/collect", allowed, collectBody(e.src.PublicKey, pageView("b-2"))) })
	if r.status != 202 || len(cmds) != 1 || cmds[0] != "evalsha" {
		t.Fatalf("second: %d %v, Redis commands %v, want one evalsha", r.status, r.body, cmds)
	}
	r = e.do(t, "POST", "/v1/collect", allowed, collectBody(e.src.PublicKey, pageView("b-3")))
	if r.status != 429 || errCode(r) != "rate_limited" || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("over the limit: %d %v %v", r.status, r.header, r.body)
	}
}
