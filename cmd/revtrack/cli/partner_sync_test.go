package cli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

// TestPartnerConnectAndSyncRun connects a workspace to a fake partner API with `revtrack admin
// partner connect`, syncs it with `revtrack admin sync run`, and checks that the running processors
// land every transaction of the dataset.
func TestPartnerConnectAndSyncRun(t *testing.T) {
	gen := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gen.Apps, gen.Shops = 2, 40
	gen.Start = gen.End.AddDate(0, -3, 0)
	ds := partnerfake.Generate(gen)
	wantTx := 0
	for _, c := range ds.Truth.Customers {
		for _, tot := range c.Totals {
			wantTx += tot.Count
		}
	}
	if wantTx == 0 {
		t.Fatal("dataset has no transactions")
	}
	scfg := partnerfake.DefaultServerConfig()
	scfg.RequestsPerSecond = 0
	fake := httptest.NewServer(partnerfake.NewServer(ds, scfg))
	t.Cleanup(fake.Close)

	db := pipeline.Migrated(t)
	kc, _ := pipeline.Topics(t)
	ctx := testenv.Ctx(t)
	store := controlplane.NewStore(db.Conn, db.Redis, db.RedisC.KeyPrefix)
	if _, err := store.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	var appIDs []string
	for _, a := range ds.Apps {
		if err := store.PutApp(ctx, "test", controlplane.App{ID: a.ID, PlatformAppID: a.ID, Name: a.Name}); err != nil {
			t.Fatal(err)
		}
		appIDs = append(appIDs, a.ID)
	}
	ws, err := store.SetSelectedApps(ctx, "test", "acme", appIDs)
	if err != nil {
		t.Fatal(err)
	}
	// No schedule: the runs of this test are the ones it starts.
	app := runapp.Start(t, kc, db.CH, db.RedisC, "--platform-sync-interval", "0")

	keys := "test-k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	flags := []string{"--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database, "--redis-addr", db.RedisC.Addr,
		"--redis-key-prefix", db.RedisC.KeyPrefix, "--kafka-brokers", strings.Join(kc.Brokers, ","), "--kafka-topic-suffix", kc.TopicSuffix,
		"--encryption-keys", keys, "--partner-api-base-url", fake.URL, "--egress-allow-private-networks"}
	run := func(args ...string) string {
		t.Helper()
		var out, logs bytes.Buffer
		if code := cli.Execute(context.Background(), append(args, flags...), &out, &logs); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs.String())
		}
		if s := out.String() + logs.String(); strings.Contains(s, scfg.Tokens[0]) {
			t.Fatalf("%v printed the token", args)
		}
		return out.String()
	}

	// The token comes only from the environment variable the flag names.
	t.Setenv("REVTRACK_TEST_PARTNER_TOKEN", scfg.Tokens[0])
	var out, logs bytes.Buffer
	if code := cli.Execute(context.Background(), append([]string{"admin", "partner", "connect", "acme", "--org", scfg.OrgID,
		"--token-env", "REVTRACK_TEST_UNSET_VAR"}, flags...), &out, &logs); code == 0 || !strings.Contains(logs.String(), "REVTRACK_TEST_UNSET_VAR") {
		t.Fatalf("connect with an unset variable: exit %d: %s", code, logs.String())
	}
	run("admin", "partner", "connect", "acme", "--org", scfg.OrgID, "--token-env", "REVTRACK_TEST_PARTNER_TOKEN")
	var shown controlplane.PartnerConnection
	if err := json.Unmarshal([]byte(run("admin", "partner", "show", "acme")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.OrganizationID != scfg.OrgID || shown.SealedWithKey != "test-k1" {
		t.Fatalf("show: %+v", shown)
	}

	dec := json.NewDecoder(strings.NewReader(run("admin", "sync", "run", "acme", "--timeout", "5m")))
	var synced []string
	var txSynced uint64
	for dec.More() {
		var r struct {
			AppID             string `json:"appId"`
			Status            string `json:"status"`
			Trigger           string `json:"trigger"`
			TransactionsCount uint64 `json:"transactionsCount"`
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.Status != "succeeded" || r.Trigger != "manual" {
			t.Errorf("run %+v", r)
		}
		synced = append(synced, r.AppID)
		txSynced += r.TransactionsCount
	}
	if strings.Join(synced, " ") != strings.Join(ws.SelectedAppIDs, " ") || txSynced != uint64(wantTx) {
		t.Fatalf("synced apps %v with %d transactions, want %v with %d", synced, txSynced, ws.SelectedAppIDs, wantTx)
	}
	count := func(q string, args ...any) uint64 {
		t.Helper()
		var n uint64
		if err := db.Conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count(`SELECT count() FROM sync_runs FINAL WHERE workspace_id = ? AND status = 'succeeded' AND trigger = 'manual'`, ws.ID); n != uint64(len(appIDs)) {
		t.Errorf("%d succeeded sync runs, want %d", n, len(appIDs))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := count(`SELECT count() FROM platform_transactions FINAL WHERE workspace_id = ?`, ws.ID)
		if n == uint64(wantTx) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("platform_transactions FINAL = %d, want %d", n, wantTx)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// --app limits the run to one selected app; an unselected app is refused.
	one := run("admin", "sync", "run", "acme", "--app", appIDs[0])
	if strings.Count(one, `"runId"`) != 1 || !strings.Contains(one, `"transactionsCount": 0`) {
		t.Errorf("second run of one app: %s", one)
	}
	out.Reset()
	logs.Reset()
	if code := cli.Execute(context.Background(), append([]string{"admin", "sync", "run", "acme", "--app", "gid://partners/App/999"}, flags...), &out, &logs); code == 0 {
		t.Error("sync of an unselected app succeeded")
	}

	// A run in flight elsewhere (its lock held) is reported, not repeated.
	locks := &platformsync.Locks{Client: db.Redis, Prefix: db.RedisC.KeyPrefix, TTL: time.Minute}
	lease, err := locks.Acquire(ctx, ws.ID, appIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	logs.Reset()
	if code := cli.Execute(context.Background(), append([]string{"admin", "sync", "run", "acme", "--app", appIDs[0]}, flags...), &out, &logs); code == 0 ||
		!strings.Contains(logs.String(), "already running") || out.Len() != 0 {
		t.Errorf("sync of an app already running: exit %d, out %q, logs %s", code, out.String(), logs.String())
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// `admin sync runs` lists the runs, newest first.
	var listed []syncruns.RunRecord
	if err := json.Unmarshal([]byte(run("admin", "sync", "runs", "acme", "--app", appIDs[0], "--limit", "5")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed[0].Status != "succeeded" || listed[0].AppID != appIDs[0] || listed[0].CoverageThrough == nil ||
		listed[0].Progress != nil {
		t.Errorf("listed runs %+v", listed)
	}

	// A running run shows the progress its process publishes in Redis (here published as a running
	// process would).
	b, err := db.Conn.PrepareBatch(ctx, `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, events_count,
transactions_count, truncated, error, version)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append("run-live", ws.ID, appIDs[0], "schedule", "running", time.Now().Add(time.Hour), uint64(0), uint64(0), uint8(0), "", uint64(time.Now().UnixMicro())); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	pub := &platformsync.ProgressPublisher{Client: db.Redis, Prefix: db.RedisC.KeyPrefix, Interval: time.Minute}
	if err := pub.Publish(ctx, ws.ID, appIDs[0], "run-live", schemas.SyncProgress{UpdatedAt: time.Now().UTC(), TransactionsCount: 75, Pages: 3,
		Walk: schemas.SyncWalk{Step: 1, Steps: 4, Stream: "transactions", Direction: "forward"}}); err != nil {
		t.Fatal(err)
	}
	listed = nil
	if err := json.Unmarshal([]byte(run("admin", "sync", "runs", "acme", "--app", appIDs[0], "--limit", "1")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].RunID != "run-live" || listed[0].Progress == nil || listed[0].Progress.Pages != 3 ||
		listed[0].Progress.TransactionsCount != 75 {
		t.Errorf("a running run listed %+v", listed)
	}
	// So does the query component's admin API (`revtrack all`), reading the same Redis.
	key, _, err := store.CreateAPIKey(ctx, "test", "acme", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://"+app.Addr+"/api/admin/sync-runs?limit=1&appId="+url.QueryEscape(appIDs[0]), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Runs []syncruns.RunRecord }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || len(body.Runs) != 1 ||
		body.Runs[0].Progress == nil || body.Runs[0].Progress.Pages != 3 {
		t.Errorf("GET /api/admin/sync-runs: %d %+v %v", resp.StatusCode, body, err)
	}
}
