package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/internal/testenv"
)

// proxy forwards TCP to target until Close, which also cuts every open connection: to the process
// under test it looks as if the service went away.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

type readiness struct {
	code int
	body map[string]any
}

func getReady(addr string) readiness {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return readiness{}
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return readiness{resp.StatusCode, body}
}

// TestAllServesReadinessAndShutsDown runs `revtrack all` against the real services, with Redis
// behind a proxy: /readyz is 200, turns 503 within seconds of Redis going away, and the process
// shuts down cleanly on cancellation.
func TestAllServesReadinessAndShutsDown(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	chc := testenv.ClickHouseConfig(t)
	rc := testenv.RedisConfig(t)
	redisProxy := newProxy(t, rc.Addr)
	addr := runapp.FreeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	logs := &runapp.Logs{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"all", "--http-addr", addr, "--kafka-brokers", strings.Join(kc.Brokers, ","),
			"--kafka-topic-suffix", kc.TopicSuffix, "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database,
			"--redis-addr", redisProxy.Addr(), "--redis-key-prefix", rc.KeyPrefix, "--log-format", "json",
			"--allow-development-encryption-key"}, io.Discard, logs)
	}()

	deadline := time.Now().Add(60 * time.Second)
	for getReady(addr).code != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("not ready within 60s; logs:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}

	redisProxy.Close()
	start := time.Now()
	var r readiness
	for r = getReady(addr); r.code != http.StatusServiceUnavailable; r = getReady(addr) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("/readyz still %d 10s after Redis went away", r.code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	checks, _ := r.body["checks"].(map[string]any)
	redis, _ := checks["redis"].(map[string]any)
	if redis["status"] != "down" {
		t.Fatalf("readiness body does not name redis as down: %v", r.body)
	}
	t.Logf("/readyz turned 503 %.1fs after Redis went away", time.Since(start).Seconds())

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d; logs:\n%s", code, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not shut down within 30s")
	}
	if !strings.Contains(logs.String(), `"msg":"http drained"`) {
		t.Fatalf("no drain in logs:\n%s", logs.String())
	}
}

func TestInvalidConfigIsRejectedBeforeStart(t *testing.T) {
	var logs bytes.Buffer
	code := cli.Execute(context.Background(), []string{"all", "--kafka-brokers", "nohostport", "--log-format", "yaml",
		"--clickhouse-database", "bad-name;"}, io.Discard, &logs)
	if code == 0 {
		t.Fatal("started with an invalid configuration")
	}
	for _, want := range []string{"kafka-brokers", "log-format", "clickhouse-database"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("error does not name %s:\n%s", want, logs.String())
		}
	}
}

func TestEnvironmentOverridesDefaults(t *testing.T) {
	t.Setenv("REVTRACK_LOG_FORMAT", "xml")
	var logs bytes.Buffer
	if code := cli.Execute(context.Background(), []string{"migrate"}, io.Discard, &logs); code == 0 {
		t.Fatal("REVTRACK_LOG_FORMAT=xml was not applied")
	}
	if !strings.Contains(logs.String(), `log-format "xml"`) {
		t.Fatalf("logs: %s", logs.String())
	}
}

// A server refuses to seal with the published development key unless told it is local use, and
// says why; another key starts without the flag.
func TestServerRefusesThePublishedKey(t *testing.T) {
	for _, cmd := range []string{"all", "ingest", "process", "query", "upload"} {
		var logs bytes.Buffer
		code := cli.Execute(context.Background(), []string{cmd, "--kafka-brokers", "127.0.0.1:1"}, io.Discard, &logs)
		if code == 0 || !strings.Contains(logs.String(), "published development key") || !strings.Contains(logs.String(), "--encryption-keys") {
			t.Fatalf("%s with the development key: exit %d, log:\n%s", cmd, code, logs.String())
		}
	}
}
