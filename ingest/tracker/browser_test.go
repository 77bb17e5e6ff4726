package tracker_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/bootstrap"
	"github.com/revtrack/revtrack/internal/cli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

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
	ctx := testenv.Ctx(t)
	kc := testenv.KafkaConfig(t)
	chc := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)
	if _, err := bootstrap.Migrate(ctx, chc, rdb, rc.KeyPrefix, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	store := controlplane.NewStore(conn, rdb, rc.KeyPrefix)
	if _, err := store.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := store.PutApp(ctx, "test", controlplane.App{ID: "app-1", Name: "App"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetSelectedApps(ctx, "test", "acme", []string{"app-1"}); err != nil {
		t.Fatal(err)
	}
	pagePort, badPort := freePort(t), freePort(t)
	src, _, err := store.CreateSource(ctx, "test", "acme", "app-1", "browser test", []string{fmt.Sprintf("http://127.0.0.1:%d", pagePort)})
	if err != nil {
		t.Fatal(err)
	}

	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	runCtx, stop := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(runCtx, []string{"all", "--http-addr", addr, "--kafka-brokers", strings.Join(kc.Brokers, ","),
			"--kafka-topic-suffix", kc.TopicSuffix, "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database,
			"--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix, "--process-backoff", "50ms", "--log-level", "warn"}, io.Discard, logs)
	}()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("revtrack exited %d:\n%s", code, logs.String())
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("revtrack not ready:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

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
		fmt.Sprintf("TRACKER_EVENTS_QUERY_URL=http://%s/?database=%s", chHTTP, chc.Database),
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
