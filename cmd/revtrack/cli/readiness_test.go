package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

// startServe runs `revtrack <command>` in-process against kc and db, with ClickHouse at chAddr,
// waits for /readyz 200 and stops it (checking a clean exit) when the test ends.
func startServe(t *testing.T, command string, kc kafkax.Config, db pipeline.DB, chAddr string) string {
	t.Helper()
	addr := runapp.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &runapp.Logs{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{command, "--http-addr", addr, "--kafka-brokers", strings.Join(kc.Brokers, ","),
			"--kafka-topic-suffix", kc.TopicSuffix, "--clickhouse-addr", chAddr, "--clickhouse-database", db.CH.Database,
			"--redis-addr", db.RedisC.Addr, "--redis-key-prefix", db.RedisC.KeyPrefix, "--process-backoff", "50ms",
			"--allow-development-encryption-key"}, io.Discard, logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("revtrack %s exited %d:\n%s", command, code, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("revtrack %s did not stop within 30s", command)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for getReady(addr).code != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("revtrack %s not ready within 60s:\n%s", command, logs.String())
		}
		select {
		case code := <-done:
			t.Fatalf("revtrack %s exited %d before it was ready:\n%s", command, code, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return addr
}

func checkNames(r readiness) []string {
	checks, _ := r.body["checks"].(map[string]any)
	var out []string
	for n := range checks {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TestIngestStaysReadyWithoutClickHouse runs the ingest edge and `revtrack all` with ClickHouse
// behind a proxy, then cuts it: `all` turns 503 naming ClickHouse, as before; the edge, which
// needs only Kafka and Redis, stays 200 and keeps accepting events.
func TestIngestStaysReadyWithoutClickHouse(t *testing.T) {
	db := pipeline.Migrated(t)
	kc := testenv.KafkaConfig(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	chProxy := newProxy(t, db.CH.Addr)
	ingest := startServe(t, "ingest", kc, db, chProxy.Addr())
	all := startServe(t, "all", kc, db, chProxy.Addr())

	if got := checkNames(getReady(ingest)); !slices.Equal(got, []string{"kafka", "redis"}) {
		t.Fatalf("ingest checks %v, want kafka and redis", got)
	}
	if got := checkNames(getReady(all)); !slices.Equal(got, []string{"clickhouse", "kafka", "redis"}) {
		t.Fatalf("all checks %v, want clickhouse, kafka and redis", got)
	}

	chProxy.Close()
	start := time.Now()
	var r readiness
	for r = getReady(all); r.code != http.StatusServiceUnavailable; r = getReady(all) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("all's /readyz still %d 10s after ClickHouse went away", r.code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ch, _ := r.body["checks"].(map[string]any)["clickhouse"].(map[string]any)
	if ch["status"] != "down" {
		t.Fatalf("all's readiness does not name clickhouse as down: %v", r.body)
	}
	// Several readiness timeouts (2 s each) after the cut: a ClickHouse check would have failed by now.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if r := getReady(ingest); r.code != http.StatusOK {
			t.Fatalf("ingest's /readyz %d with ClickHouse down: %v", r.code, r.body)
		}
	}

	body, _ := json.Marshal(map[string]any{"teamSlug": "acme", "publicKey": tenant.Source.PublicKey, "eventId": "ready-1",
		"acquisitionId": "acq-ready", "name": "install", "customerRef": "shop-ready.myshopify.com",
		"occurredAt": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)})
	req, _ := http.NewRequest(http.MethodPost, "http://"+ingest+"/api/tracking/server-events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tenant.PrivateKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("server event with ClickHouse down: %d %s", resp.StatusCode, b)
	}
}
