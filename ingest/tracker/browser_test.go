package tracker_test

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"

	"github.com/revtrack/revtrack/internal/testenv"
)

func freePort(t *testing.T) int {
	_, port, _ := net.SplitHostPort(runapp.FreeAddr(t))
	n, _ := strconv.Atoi(port)
	return n
}

// TestTrackerInChromium runs browsertest/*.test.mjs — tracker.js in a real headless Chromium —
// against the real edge: `revtrack all` on the test stack (ingest, Kafka, the sessionizer,
// ClickHouse), with a tracking source that allows the test page's origin. `make test` installs
// Chromium and the Node packages.
func TestTrackerInChromium(t *testing.T) {
	dir, _ := filepath.Abs("browsertest")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("browser test packages are missing: run `make test` (it runs npm ci in %s)", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is required for the browser tests")
	}
	db := pipeline.Migrated(t)
	pagePort, badPort := freePort(t), freePort(t)
	tenant := pipeline.Seed(t, db, fmt.Sprintf("http://127.0.0.1:%d", pagePort))
	app := runapp.Start(t, testenv.KafkaConfig(t), db.CH, db.RedisC, "--log-level", "warn")
	addr, src, chc, logs := app.Addr, tenant.Source, db.CH, app.Logs

	chHTTP := os.Getenv("STACK_CLICKHOUSE_HTTP_ADDR")
	if chHTTP == "" {
		chHTTP = "127.0.0.1:28123"
	}
	cmd := exec.Command("node", "--test", "--test-reporter=spec")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TRACKER_DEV_COLLECTOR=",
		"TRACKER_BASE_URL=http://"+addr,
		"TRACKER_PUBLIC_KEY="+src.PublicKey,
		fmt.Sprintf("TRACKER_EVENTS_QUERY_URL=http://%s/?database=%s&user=%s&password=%s", chHTTP, chc.Database,
			url.QueryEscape(chc.Username), url.QueryEscape(chc.Password)),
		fmt.Sprintf("TRACKER_PAGE_PORT=%d", pagePort),
		fmt.Sprintf("TRACKER_BAD_PAGE_PORT=%d", badPort),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("browser tests:\n%s", out)
	if err != nil {
		t.Fatalf("browser tests failed: %v\nrevtrack logs:\n%s", err, logs.String())
	}
}

// TestTrackerScriptedAnswers runs the cases that need answers the real edge gives only under
// conditions a test cannot cheaply force (a 429 with Retry-After, one 503 then 202, a 400): the
// script's reaction to them, against the scripted stand-in collector in browsertest/devcollector.mjs.
func TestTrackerScriptedAnswers(t *testing.T) {
	dir, _ := filepath.Abs("browsertest")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("browser test packages are missing: run `make test` (it runs npm ci in %s)", dir)
	}
	cmd := exec.Command("node", "--test", "--test-reporter=spec", "--test-name-pattern=dev collector")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TRACKER_DEV_COLLECTOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("browser tests:\n%s", out)
	if err != nil {
		t.Fatalf("scripted-answer browser tests failed: %v", err)
	}
	if !bytes.Contains(out, []byte("pass 2")) {
		t.Fatalf("expected the 2 scripted-answer cases to run and pass")
	}
}
