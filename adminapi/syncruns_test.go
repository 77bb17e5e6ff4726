package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/openapi"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

func TestSyncRunsOverHTTP(t *testing.T) {
	f := setupSync(t)
	const path = "/api/admin/sync-runs"
	ctx := testenv.Ctx(t)
	if status, body := f.call(t, "POST", path, f.rdr, nil); status != 403 {
		t.Fatalf("read-scoped key: %d %v", status, body)
	}
	status, body := f.call(t, "POST", path, f.admin, nil)
	if status != 409 || body["error"] != "conflict" || !strings.Contains(body["message"].(string), "partner-connection") {
		t.Fatalf("without a connection: %d %v", status, body)
	}
	if status, body := f.call(t, "PUT", "/api/admin/partner-connection", f.admin,
		map[string]any{"organizationId": "1234567", "accessToken": f.token}); status != 200 {
		t.Fatalf("connect: %d %v", status, body)
	}
	if status, body := f.call(t, "POST", path, f.admin, map[string]any{"appId": "app-9"}); status != 400 || body["error"] != "invalid_parameter" {
		t.Fatalf("unselected app: %d %v", status, body)
	}

	// A run held in flight by the partner API.
	f.hold()
	status, body = f.call(t, "POST", path, f.admin, map[string]any{"appId": "app-1"})
	if status != 202 {
		t.Fatalf("start: %d %v", status, body)
	}
	runs := body["runs"].([]any)
	if len(runs) != 1 || len(body["alreadyRunning"].([]any)) != 0 {
		t.Fatalf("start: %v", body)
	}
	run := runs[0].(map[string]any)
	runID := run["runId"].(string)
	if run["appId"] != "app-1" || run["status"] != "running" || run["trigger"] != "manual" || run["finishedAt"] != nil {
		t.Fatalf("started run %v", run)
	}
	<-f.held
	status, body = f.call(t, "POST", path, f.admin, nil) // every selected app: app-1 only, in flight
	if status != 409 || body["error"] != "conflict" || !strings.Contains(body["message"].(string), "already running") {
		t.Fatalf("while running: %d %v", status, body)
	}
	// An empty body sent chunked (no Content-Length) is no body, not bad JSON.
	req, _ := http.NewRequest("POST", f.srv.URL+path, io.MultiReader(strings.NewReader("")))
	req.Header.Set("Authorization", "Bearer "+f.admin)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 409 {
		t.Fatalf("chunked empty body while running: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	status, body = f.call(t, "GET", path, f.admin, nil)
	if status != 200 || len(body["runs"].([]any)) != 1 || body["runs"].([]any)[0].(map[string]any)["status"] != "running" {
		t.Fatalf("list while running: %d %v", status, body)
	}
	// The running run's progress, published by the process running it: its first walk has begun
	// and waits on its first page.
	var progress map[string]any
	testenv.Eventually(t, "the running run's progress", func() bool {
		_, body := f.call(t, "GET", path, f.admin, nil)
		progress, _ = body["runs"].([]any)[0].(map[string]any)["progress"].(map[string]any)
		return progress != nil
	})
	if w, _ := progress["walk"].(map[string]any); w["step"] != 1.0 || w["stream"] != "transactions" || w["direction"] != "forward" ||
		w["reachedAt"] != w["from"] || w["target"] == nil || progress["pages"] != 0.0 || progress["transactionsCount"] != 0.0 {
		t.Fatalf("progress while the first page is held: %v", progress)
	}
	f.release()
	testenv.Eventually(t, "the run to finish", func() bool {
		rs, err := syncruns.Store{CH: f.db.Conn}.List(ctx, wsID(t, f), "app-1", 1)
		return err == nil && len(rs) == 1 && rs[0].Status == platformsync.StatusSucceeded
	})

	status, body = f.call(t, "GET", path+"?appId=app-1&limit=1", f.admin, nil)
	got := body["runs"].([]any)
	if status != 200 || len(got) != 1 {
		t.Fatalf("list: %d %v", status, body)
	}
	if r := got[0].(map[string]any); r["runId"] != runID || r["status"] != "succeeded" || r["finishedAt"] == nil || r["coverageThrough"] == nil ||
		r["progress"] != nil || r["transactionsCount"] == 0.0 {
		t.Errorf("finished run %v", r)
	}
	for _, q := range []string{"?limit=0", "?limit=501", "?limit=x"} {
		if status, _ := f.call(t, "GET", path+q, f.admin, nil); status != 400 {
			t.Errorf("GET %s: %d", q, status)
		}
	}
	if status, body := f.call(t, "GET", path+"?appId=app-2", f.admin, nil); status != 200 || len(body["runs"].([]any)) != 0 {
		t.Errorf("another app's runs: %d %v", status, body)
	}

	status, raw := f.raw(t, "GET", "/api/admin/audit?limit=50", f.admin, nil)
	if status != 200 || bytes.Contains(raw, []byte(f.token)) {
		t.Fatalf("audit: %d", status)
	}
	var audit struct {
		Entries []controlplane.AuditEntry `json:"entries"`
	}
	_ = json.Unmarshal(raw, &audit)
	found := false
	for _, e := range audit.Entries {
		found = found || e.Action == "sync_run.start" && e.TargetID == runID && e.Details["appIds"] == "app-1" && strings.HasPrefix(e.Actor, "key:")
	}
	if !found {
		t.Errorf("audit lacks sync_run.start of %s: %+v", runID, audit.Entries)
	}
	if strings.Contains(f.logs.String(), f.token) {
		t.Error("the logs contain the token")
	}
}

// The list's body is a contract (the list_sync_runs tool shows the same records): recorded runs
// come back newest first, with nulls for what is not known; a running run carries the progress its
// process publishes, and none when nothing publishes it (its process died).
func TestSyncRunsListBody(t *testing.T) {
	f := setupSync(t)
	ctx := testenv.Ctx(t)
	ws := wsID(t, f)
	b, err := f.db.Conn.PrepareBatch(ctx, `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at,
events_count, transactions_count, coverage_from, coverage_through, truncated, error, version)`)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	for _, r := range []struct {
		id, trigger, status string
		started, finished   *time.Time
		events, txs         uint64
		from, through       *time.Time
		trunc               uint8
		err                 string
		version             uint64
	}{
		{"run-a", "schedule", "running", at("2026-03-31T04:00:00Z"), nil, 0, 0, nil, nil, 0, "", 1},
		{"run-a", "schedule", "partial", at("2026-03-31T04:00:00Z"), at("2026-03-31T04:30:00Z"), 1200, 5300,
			at("2025-11-20T13:00:01Z"), at("2026-03-31T04:00:00Z"), 0, "", 2},
		{"run-b", "manual", "succeeded", at("2026-03-31T05:00:00Z"), at("2026-03-31T05:10:00Z"), 40, 310,
			at("2024-06-01T00:00:00Z"), at("2026-03-31T05:00:00Z"), 1, "", 3},
		{"run-c", "schedule", "failed", at("2026-03-31T06:00:00Z"), at("2026-03-31T06:00:09Z"), 0, 0,
			at("2024-06-01T00:00:00Z"), at("2026-03-31T05:00:00Z"), 1, "transactions: partner api: HTTP 500: Internal Server Error", 4},
		{"run-d", "manual", "running", at("2026-03-31T07:00:00Z"), nil, 0, 0, nil, nil, 0, "", 5},
		{"run-e", "schedule", "running", at("2026-03-31T06:30:00Z"), nil, 0, 0, nil, nil, 0, "", 6}, // its process died: no progress
	} {
		if err := b.Append(r.id, ws, "app-1", r.trigger, r.status, *r.started, r.finished, r.events, r.txs, r.from, r.through, r.trunc, r.err, r.version); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	// run-d's process publishes its progress: the backward transactions walk, its target known.
	eta := int64(42)
	pub := &platformsync.ProgressPublisher{Client: f.db.Redis, Prefix: f.db.RedisC.KeyPrefix, Interval: time.Minute}
	if err := pub.Publish(ctx, ws, "app-1", "run-d", schemas.SyncProgress{UpdatedAt: *at("2026-03-31T07:03:10Z"), EventsCount: 900,
		TransactionsCount: 2400, Pages: 57, Walk: schemas.SyncWalk{Step: 4, Steps: 4, Stream: "transactions", Direction: "backward",
			From: *at("2026-01-01T00:00:00Z"), ReachedAt: *at("2025-07-14T09:30:01Z"), Target: at("2024-06-01T00:00:00Z"),
			EstimatedSecondsLeft: &eta}}); err != nil {
		t.Fatal(err)
	}
	status, raw := f.raw(t, "GET", "/api/admin/sync-runs?appId=app-1", f.admin, nil)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	testenv.Golden(t, "testdata/sync_runs.json", pretty.Bytes())

	// The body, progress included, is what the OpenAPI document says.
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	schema := doc.Paths.Find("/api/admin/sync-runs").Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(v); err != nil {
		t.Errorf("the body does not match the OpenAPI schema: %v", err)
	}
	// Control: a walk in no known direction is refused, so the check can fail.
	v.(map[string]any)["runs"].([]any)[0].(map[string]any)["progress"].(map[string]any)["walk"].(map[string]any)["direction"] = "sideways"
	if schema.VisitJSON(v) == nil {
		t.Error("the schema accepts a progress walk in direction sideways")
	}
}

func wsID(t *testing.T, f *syncFixture) string {
	t.Helper()
	w, err := f.store.WorkspaceBySlug(testenv.Ctx(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return w.ID
}
