package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// The tests run `revtrack all` in-process; a stopped app must leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stack is `revtrack all` on the test stack with a workspace whose two apps were synced from the
// fake partner API through the real sync, Kafka and processors.
type stack struct {
	base       string // http://host:port
	store      *controlplane.Store
	ws         controlplane.Workspace
	dataset    *partnerfake.Dataset
	apiKey     string // a read-scoped workspace key
	trackerKey string // the tracking source's private key (tracker_sk_…)
	db         pipeline.DB
}

// mcpURL is the MCP endpoint.
func (s stack) mcpURL() string { return s.base + "/api/mcp" }

// startStack starts the app and loads a small data set ending today: 2 apps, 40 shops, 3 months.
func startStack(t testing.TB) stack {
	t.Helper()
	gen := partnerfake.DemoConfig(time.Now().UTC())
	gen.Apps, gen.Shops = 2, 40
	gen.SharedDomainRate = 0.3 // some shops in both apps: a domain that is ambiguous (409)
	gen.Start = gen.End.AddDate(0, -3, 0)
	ds := partnerfake.Generate(gen)
	scfg := partnerfake.DefaultServerConfig()
	scfg.RequestsPerSecond = 0
	fake := httptest.NewServer(partnerfake.NewServer(ds, scfg))
	t.Cleanup(fake.Close)

	db := pipeline.Migrated(t)
	kc, _ := pipeline.Topics(t)
	ctx := testenv.Ctx(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	store := tenant.Store
	var appIDs []string
	for _, a := range ds.Apps {
		if err := store.PutApp(ctx, "test", controlplane.App{ID: a.ID, PlatformAppID: a.ID, Name: a.Name}); err != nil {
			t.Fatal(err)
		}
		appIDs = append(appIDs, a.ID)
	}
	// The seeded tracking source belongs to app-1, which stays selected beside the synced apps.
	ws, err := store.SetSelectedApps(ctx, "test", "acme", append([]string{"app-1"}, appIDs...))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := store.CreateAPIKey(ctx, "test", "acme", "mcp", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	// No scheduled sync: the runs and the data stay what this function loaded.
	app := runapp.Start(t, kc, db.CH, db.RedisC, "--log-level", "warn", "--platform-sync-interval", "0")

	flags := []string{"--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database, "--redis-addr", db.RedisC.Addr,
		"--redis-key-prefix", db.RedisC.KeyPrefix, "--kafka-brokers", strings.Join(kc.Brokers, ","), "--kafka-topic-suffix", kc.TopicSuffix,
		"--encryption-keys", "test-k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)),
		"--partner-api-base-url", fake.URL, "--egress-allow-private-networks"}
	run := func(wantCode int, args ...string) {
		t.Helper()
		var out, logs bytes.Buffer
		if code := cli.Execute(context.Background(), append(args, flags...), &out, &logs); code != wantCode {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, wantCode, logs.String())
		}
	}
	t.Setenv("REVTRACK_TEST_PARTNER_TOKEN", scfg.Tokens[0])
	run(0, "admin", "partner", "connect", "acme", "--org", scfg.OrgID, "--token-env", "REVTRACK_TEST_PARTNER_TOKEN")
	for _, id := range appIDs {
		run(0, "admin", "sync", "run", "acme", "--app", id, "--timeout", "5m")
	}
	// A run of every selected app: the synced apps again (nothing new), and app-1, which the partner
	// API does not know, fails: list_sync_runs has a failed run to show.
	run(1, "admin", "sync", "run", "acme", "--timeout", "5m")

	wantTx := 0
	for _, c := range ds.Truth.Customers {
		for _, tot := range c.Totals {
			wantTx += tot.Count
		}
	}
	testenv.Eventually(t, "every synced transaction landed", func() bool {
		var n uint64
		err := db.Conn.QueryRow(ctx, `SELECT count() FROM platform_transactions FINAL WHERE workspace_id = ?`, ws.ID).Scan(&n)
		return err == nil && n == uint64(wantTx)
	})
	// Customers and charges are derived after landing; answers compared with REST must not change
	// between the two calls, so wait until every platform table has stopped changing.
	signature := func() string {
		var b strings.Builder
		for _, table := range []string{"platform_customers", "platform_charges", "platform_lifecycle_events", "platform_transactions", "platform_usage_charges"} {
			var n uint64
			if err := db.Conn.QueryRow(ctx, "SELECT count() FROM "+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s=%d ", table, n)
		}
		return b.String()
	}
	last, same := signature(), 0
	testenv.Eventually(t, "the platform tables settled", func() bool {
		time.Sleep(300 * time.Millisecond)
		if s := signature(); s != last {
			last, same = s, 0
			return false
		}
		same++
		return same >= 3
	})
	return stack{base: app.URL(), store: store, ws: ws, dataset: ds, apiKey: key, trackerKey: tenant.PrivateKey, db: db}
}

// rest calls the REST API with a bearer key.
func (s stack) rest(t testing.TB, path, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
