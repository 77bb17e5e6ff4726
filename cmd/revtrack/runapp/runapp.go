// Package runapp runs `revtrack all` in-process for end-to-end tests, against a test's own database,
// topics and Redis prefix.
package runapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
)

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Logs collects the process's log lines safely across goroutines.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *Logs) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// App is a running `revtrack all`.
type App struct {
	Addr string
	Logs *Logs
}

// Start runs `revtrack all` on a free port with the given services and extra flags, waits until
// /readyz answers 200, and stops it (checking a clean exit) when the test ends.
func Start(t testing.TB, kc kafkax.Config, ch clickhousex.Config, rc redisx.Config, extra ...string) App {
	t.Helper()
	addr := FreeAddr(t)
	args := append([]string{"all", "--http-addr", addr, "--kafka-brokers", strings.Join(kc.Brokers, ","),
		"--kafka-topic-suffix", kc.TopicSuffix, "--clickhouse-addr", ch.Addr, "--clickhouse-database", ch.Database,
		"--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix, "--process-backoff", "50ms", "--allow-development-encryption-key", "--egress-allow-private-networks"}, extra...)
	ctx, stop := context.WithCancel(context.Background())
	logs := &Logs{}
	done := make(chan int, 1)
	go func() { done <- cli.Execute(ctx, args, io.Discard, logs) }()
	t.Cleanup(func() {
		stop()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("revtrack exited %d:\n%s", code, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("revtrack did not stop within 30s")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return App{Addr: addr, Logs: logs}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("revtrack not ready within 60s:\n%s", logs.String())
		}
		select {
		case code := <-done:
			t.Fatalf("revtrack exited %d before it was ready:\n%s", code, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// URL is the app's base URL.
func (a App) URL() string { return fmt.Sprintf("http://%s", a.Addr) }
