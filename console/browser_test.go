package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

var (
	seedKey   = regexp.MustCompile(`api_key=(revtrack_sk_\w+)`)
	seedEmail = regexp.MustCompile(`\bemail=(\S+)`)
	seedPass  = regexp.MustCompile(`\bpassword=(\S+)`)
	seedPK    = regexp.MustCompile(`\btracker_pk=(\S+)`)
	seedSK    = regexp.MustCompile(`\btracker_sk=(\S+)`)
)

// TestConsoleInChromium runs browsertest/*.test.mjs — the console in Debian's Chromium — against
// `revtrack all` on the test stack with make run's demo data (the partner API fake's demo set,
// seeded with `revtrack-dev seed-demo`, its tracking sent with `revtrack-dev seed-tracking` and
// synced with `revtrack admin sync run`, in make run's order), as docs/TESTING.md
// describes. The console under test is the one embedded in this test binary: `make test` builds it
// (make console) before compiling. CONSOLE_SCREENSHOTS=<dir> makes the screen tests write their
// screenshots there (make console-screenshots).
func TestConsoleInChromium(t *testing.T) {
	dir, _ := filepath.Abs(".")
	if _, err := os.Stat(filepath.Join(dir, "dist", "index.html")); err != nil {
		t.Fatal("console/dist is not built: run `make build` or `make test` (they build the console first)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatal("the console's Node packages are missing: run `make test` (it runs npm ci in console/)")
	}
	db := pipeline.Migrated(t)
	cfg := partnerfake.DefaultServerConfig()
	cfg.RequestsPerSecond = 0
	fake := httptest.NewServer(partnerfake.NewServer(partnerfake.Generate(partnerfake.DemoConfig(time.Now())), cfg))
	t.Cleanup(fake.Close)
	kc := testenv.KafkaConfig(t)
	// The Ads screen connects to the local Google fake (as deploy/local/run does), and the uploader
	// sends due rows every second so a queue row turns validated or accepted while the test watches.
	google, googleFlags := startGoogleFake(t)
	app := runapp.Start(t, kc, db.CH, db.RedisC, append([]string{"--log-level", "warn", "--platform-sync-interval", "0", "--partner-api-base-url", fake.URL},
		googleFlags...)...)

	var out, logs bytes.Buffer
	if code := devcli.Execute(context.Background(), []string{"seed-demo", "--clickhouse-addr", db.CH.Addr,
		"--clickhouse-database", db.CH.Database, "--redis-addr", db.RedisC.Addr, "--redis-key-prefix", db.RedisC.KeyPrefix}, &out, &logs); code != 0 {
		t.Fatalf("seed-demo: %s", logs.String())
	}
	seed := out.String()
	key := seedKey.FindStringSubmatch(seed)
	if key == nil {
		t.Fatalf("seed-demo printed %q", seed)
	}
	// The demo's tracked visits and verified events, as deploy/local/run sends them, so that the
	// Acquisition screen (and its screenshot) shows the campaigns, not only the untracked rows.
	pk, sk := seedPK.FindStringSubmatch(seed), seedSK.FindStringSubmatch(seed)
	if pk == nil || sk == nil {
		t.Fatalf("seed-demo printed no tracker keys: %q", seed)
	}
	out.Reset()
	logs.Reset()
	if code := devcli.Execute(context.Background(), []string{"seed-tracking", "--base-url", app.URL(), "--public-key", pk[1], "--private-key", sk[1],
		"--log-level", "warn"}, &out, &logs); code != 0 {
		t.Fatalf("seed-tracking: %s", logs.String())
	}
	out.Reset()
	logs.Reset()
	if code := cli.Execute(context.Background(), []string{"admin", "sync", "run", "demo", "--timeout", "5m",
		"--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database, "--redis-addr", db.RedisC.Addr,
		"--redis-key-prefix", db.RedisC.KeyPrefix, "--kafka-brokers", strings.Join(kc.Brokers, ","), "--kafka-topic-suffix", kc.TopicSuffix,
		"--partner-api-base-url", fake.URL, "--egress-allow-private-networks", "--allow-development-encryption-key"}, &out, &logs); code != 0 {
		t.Fatalf("admin sync run: exit %d: %s", code, logs.String())
	}
	waitForRevenue(t, app.URL(), key[1])
	waitForChannels(t, app.URL(), key[1])

	// The demo owner: make run's seed-demo prints one once it creates it; otherwise the test makes
	// one as an operator would, with `revtrack admin user create` (a generated password, printed once).
	admin := func(args ...string) map[string]any {
		return adminCLI(t, db, app.URL(), args...)
	}
	email, password := "", ""
	if e, p := seedEmail.FindStringSubmatch(seed), seedPass.FindStringSubmatch(seed); e != nil && p != nil {
		email, password = e[1], p[1]
	} else {
		email = "console-owner@demo.example"
		password = admin("user", "create", "--email", email, "--name", "Demo Owner", "--workspace", "demo", "--role", "owner")["password"].(string)
	}
	// The one-time links of the CLI: an invitation for a new person, and a password reset for a
	// member created for it.
	invite := admin("user", "invite", "--workspace", "demo", "--email", "invited@demo.example", "--role", "member")["link"].(string)
	admin("user", "create", "--email", "reset@demo.example", "--name", "Reset Member", "--workspace", "demo", "--role", "member")
	reset := admin("user", "reset-password", "--email", "reset@demo.example")["link"].(string)
	// A second workspace (one of the demo's apps, no partner connection so no data) where the owner is
	// a member: the workspace switcher.
	admin("workspace", "create", "second", "--name", "Second Apps Ltd.", "--apps", "demo-reviews")
	admin("member", "put", "second", email, "member")
	secondKey := admin("key", "create", "second", "--name", "console browser test")["key"].(string)
	env := append(os.Environ(), "CONSOLE_GOOGLE_FAKE="+google, "CONSOLE_TRACKER_PK="+pk[1], "CONSOLE_TRACKER_SK="+sk[1],
		"CONSOLE_SECOND_KEY="+secondKey, "CONSOLE_URL="+app.URL(), "CONSOLE_API_KEY="+key[1], "CONSOLE_EMAIL="+email, "CONSOLE_PASSWORD="+password,
		"CONSOLE_INVITE_LINK="+invite, "CONSOLE_RESET_LINK="+reset, "CONSOLE_RESET_EMAIL=reset@demo.example")
	// CONSOLE_BROWSER_TESTS narrows the run to some files (e.g. "browsertest/ads.test.mjs") while
	// working on one screen; make test runs them all.
	files := strings.Fields(os.Getenv("CONSOLE_BROWSER_TESTS"))
	if len(files) == 0 {
		files = []string{"browsertest/"}
	}
	cmd := exec.Command("node", append([]string{"--test", "--test-reporter=spec", "--test-concurrency=1"}, files...)...)
	cmd.Dir = dir
	cmd.Env = env
	res, err := cmd.CombinedOutput()
	t.Logf("browser tests:\n%s", res)
	if err != nil {
		t.Fatalf("browser tests failed: %v\nrevtrack logs:\n%s", err, app.Logs.String())
	}
}

// startGoogleFake serves devtools/googlefake with one test control, POST /test/fail-revocation?status=N
// (0 restores it), so the browser test can make Google's revocation fail; it returns the fake's URL
// and the flags pointing `revtrack all` at it.
func startGoogleFake(t *testing.T) (string, []string) {
	cfg := googlefake.DefaultConfig()
	g := googlefake.New(cfg)
	mux := http.NewServeMux()
	mux.Handle("/", g)
	mux.HandleFunc("POST /test/fail-revocation", func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		g.FailRevocation(status)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, []string{"--ads-google-base-url", srv.URL, "--ads-oauth-client-id", cfg.ClientID,
		"--ads-oauth-client-secret", cfg.ClientSecret, "--ads-dispatch-interval", "1s"}
}

// adminCLI runs `revtrack admin <args>` against the test's stores, with the app's base URL (the
// links it prints point at it), and returns the JSON it printed.
func adminCLI(t *testing.T, db pipeline.DB, baseURL string, args ...string) map[string]any {
	t.Helper()
	var out, logs bytes.Buffer
	args = append(append([]string{"admin"}, args...), "--base-url", baseURL, "--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database,
		"--redis-addr", db.RedisC.Addr, "--redis-key-prefix", db.RedisC.KeyPrefix)
	if code := cli.Execute(context.Background(), args, &out, &logs); code != 0 {
		t.Fatalf("%v: exit %d: %s", args[:3], code, logs.String())
	}
	var printed map[string]any
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatalf("%v printed %q", args[:3], out.String())
	}
	return printed
}

// waitForChannels waits until the tracking has reached attribution: a campaign row with customers.
// The tracking events go through Kafka, so they may land after the synced revenue.
func waitForChannels(t *testing.T, base, key string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/attribution?groupBy=utm_campaign", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Cache-Control", "no-cache")
		var a struct {
			Rows []struct {
				Kind      string
				Key       *string
				Customers int
			}
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&a)
			resp.Body.Close()
		}
		for _, r := range a.Rows {
			if r.Kind == "channel" && r.Key != nil && *r.Key != "" && r.Customers > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo tracking did not reach GET /api/v1/attribution within 2 minutes")
		}
	}
}

// waitForRevenue waits until the synced demo data is in the reporting tables: the summary has a
// paying customer.
func waitForRevenue(t *testing.T, base, key string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/summary", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		var s struct{ Currencies []string }
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&s)
			resp.Body.Close()
		}
		if len(s.Currencies) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo data did not reach the summary within 2 minutes")
		}
	}
}
