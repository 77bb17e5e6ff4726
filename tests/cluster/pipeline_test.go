package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

// repoRoot is the checkout these tests run in.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// stackSettings returns what `deploy/local/stack env` prints for a shape: the single-node stack
// named name, or the cluster. The script's exports are evaluated by bash in an environment holding
// nothing of this process's REVTRACK_* settings, so the two shapes never mix.
func stackSettings(t testing.TB, name string, cluster bool) map[string]string {
	t.Helper()
	args := []string{"env"}
	if cluster {
		args = append(args, "--cluster")
	}
	const prog = `eval "$("$0" "$@")" || exit 1; env -0`
	cmd := exec.Command("bash", append([]string{"-c", prog, filepath.Join(repoRoot(), "deploy", "local", "stack")}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "STACK_NAME=" + name}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stack env %v: %v: %s", args, err, stderr.String())
	}
	m := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "REVTRACK_") || strings.HasPrefix(k, "STACK_")) {
			m[k] = v
		}
	}
	for _, k := range []string{"REVTRACK_KAFKA_BROKERS", "REVTRACK_CLICKHOUSE_ADDR", "REVTRACK_REDIS_ADDR", "REVTRACK_CLICKHOUSE_USERNAME"} {
		if m[k] == "" {
			t.Fatalf("stack env %v does not set %s", args, k)
		}
	}
	return m
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary is bin/revtrack built from this checkout once per test binary (REVTRACK_CLUSTER_BIN names
// one already built): the components run as processes of the product, as in production.
func binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("REVTRACK_CLUSTER_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "revtrack-cluster-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "revtrack")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/revtrack")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/revtrack: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// instance is one deployment of revtrack for a test: `revtrack all` as a process on one shape of
// the local stack, with its own database, topics, consumer groups and Redis prefix (removed at the
// end), so the cluster's other users and the shared test stack's are never touched.
type instance struct {
	shape    string // "single" or "cluster"
	cluster  bool
	settings map[string]string
	id       string
	db       string
	suffix   string
	group    string
	prefix   string
	bin      string
	logPath  string
	base     string // http://host:port of `revtrack all`
	proc     *exec.Cmd
	exited   chan error
	shared   bool // removed by TestMain, not by the test that made it

	team, app, apiKey, sourceID, publicKey, privateKey, workspaceID string
}

func newInstance(t *testing.T, shape string, cluster bool, settings map[string]string) *instance {
	t.Helper()
	id := randomSuffix(t)
	in := &instance{shape: shape, cluster: cluster, settings: settings, id: id, db: "clustertest_" + id,
		suffix: ".clustertest" + id, group: "clustertest" + id, prefix: "clustertest" + id + ":", bin: binary(t)}
	logDir := filepath.Join(repoRoot(), "bin", "cluster-logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	in.logPath = filepath.Join(logDir, shape+"-"+id+".log")
	t.Cleanup(func() {
		if !in.shared {
			in.cleanup(t.Errorf)
		}
	})
	return in
}

// The cluster instance of the comparison is shared: the fault test takes the load on it rather
// than migrating, seeding and starting a second deployment (half a minute on 2 cores). Shared
// instances are removed when the package's tests end (TestMain).
var (
	sharedMu  sync.Mutex
	sharedCl  *instance
	sharedAll []*instance
)

// share keeps the instance for the tests that follow; it is removed after the last one.
func (in *instance) share() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	in.shared = true
	sharedCl = in
	sharedAll = append(sharedAll, in)
}

// sharedCluster is the running cluster instance an earlier test shared, or nil.
func sharedCluster() *instance {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedCl != nil && sharedCl.proc != nil {
		return sharedCl
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, in := range sharedAll {
		in.cleanup(func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
			code = 1
		})
	}
	os.Exit(code)
}

// flags are the settings of every revtrack command of the instance; the credentials go in the
// environment (childEnv), not on a command line.
func (in *instance) flags() []string {
	s := in.settings
	f := []string{"--kafka-brokers", s["REVTRACK_KAFKA_BROKERS"], "--kafka-topic-suffix", in.suffix,
		"--clickhouse-addr", s["REVTRACK_CLICKHOUSE_ADDR"], "--clickhouse-database", in.db,
		"--redis-addr", s["REVTRACK_REDIS_ADDR"], "--redis-key-prefix", in.prefix,
		"--process-group-prefix", in.group, "--ads-group-prefix", in.group,
		"--allow-development-encryption-key", "--egress-allow-private-networks", "--log-level", "warn"}
	if in.cluster {
		return append(f, "--clickhouse-cluster", s["REVTRACK_CLICKHOUSE_CLUSTER"], "--redis-cluster",
			"--kafka-replication-factor", s["REVTRACK_KAFKA_REPLICATION_FACTOR"])
	}
	return append(f, "--clickhouse-cluster=", "--redis-cluster=false", "--kafka-replication-factor", "1")
}

func (in *instance) childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REVTRACK_") {
			out = append(out, kv)
		}
	}
	return append(out, "REVTRACK_CLICKHOUSE_USERNAME="+in.settings["REVTRACK_CLICKHOUSE_USERNAME"],
		"REVTRACK_CLICKHOUSE_PASSWORD="+in.settings["REVTRACK_CLICKHOUSE_PASSWORD"])
}

func (in *instance) logFile(t testing.TB) *os.File {
	t.Helper()
	f, err := os.OpenFile(in.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// cli runs one revtrack command of the instance and returns its standard output.
func (in *instance) cli(t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := in.logFile(t)
	defer log.Close()
	fmt.Fprintf(log, "--- revtrack %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, in.bin, append(append([]string{}, args...), in.flags()...)...)
	var out bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = in.childEnv(), &out, log
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: revtrack %s: %v (log %s)", in.shape, strings.Join(args, " "), err, in.logPath)
	}
	return out.Bytes()
}

// start runs `revtrack all` and waits for /readyz.
func (in *instance) start(t testing.TB, extra ...string) {
	t.Helper()
	addr := freeAddr(t)
	in.base = "http://" + addr
	log := in.logFile(t)
	args := append([]string{"all", "--http-addr", addr, "--auto-migrate=false", "--process-backoff", "50ms",
		// Far above the tests' load: the limits are not what is measured (their round trip still runs).
		"--ingest-server-events-per-minute", "1000000", "--ingest-browser-requests-per-minute", "1000000"}, extra...)
	fmt.Fprintf(log, "--- revtrack %s\n", strings.Join(args, " "))
	cmd := exec.Command(in.bin, append(args, in.flags()...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = in.childEnv(), log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = log.Close()
	in.proc, in.exited = cmd, make(chan error, 1)
	go func() { in.exited <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if resp, err := http.Get(in.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-in.exited:
			in.proc = nil
			t.Fatalf("%s: revtrack all exited before it was ready: %v (log %s)", in.shape, err, in.logPath)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: revtrack all not ready within 90 s (log %s)", in.shape, in.logPath)
		}
	}
}

// stop ends `revtrack all` with SIGTERM, as a deployment does.
func (in *instance) stop(errorf func(format string, args ...any)) {
	if in.proc == nil {
		return
	}
	_ = in.proc.Process.Signal(os.Interrupt)
	select {
	case <-in.exited:
	case <-time.After(30 * time.Second):
		_ = in.proc.Process.Kill()
		<-in.exited
		errorf("%s: revtrack all did not stop within 30 s of SIGINT", in.shape)
	}
	in.proc = nil
}

// cleanup stops the process and removes the instance's data, unless REVTRACK_CLUSTER_KEEP=1.
func (in *instance) cleanup(errorf func(format string, args ...any)) {
	start := time.Now()
	in.stop(errorf)
	if os.Getenv("REVTRACK_CLUSTER_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "%s kept: database %s, topics *%s, Redis %s*\n", in.shape, in.db, in.suffix, in.prefix)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if rdb, err := redisx.Open(ctx, in.redisConfig()); err == nil {
		_ = redisx.DeleteMatching(ctx, rdb, in.prefix+"*")
		_ = rdb.Close()
	}
	if cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(in.settings["REVTRACK_KAFKA_BROKERS"], ",")...)); err == nil {
		adm := kadm.NewClient(cl)
		if groups, err := adm.ListGroups(ctx); err == nil {
			var mine []string
			for _, g := range groups.Groups() {
				if strings.HasPrefix(g, in.group) {
					mine = append(mine, g)
				}
			}
			if len(mine) > 0 {
				_, _ = adm.DeleteGroups(ctx, mine...)
			}
		}
		var topics []string
		for _, tp := range schemas.Topics() {
			topics = append(topics, tp.Name+in.suffix)
		}
		_, _ = adm.DeleteTopics(ctx, topics...)
		adm.Close()
	}
	cfg := in.chConfig()
	cfg.Cluster, cfg.ReadTimeout = "", 2*time.Minute
	if srv, err := clickhousex.OpenServer(ctx, cfg); err == nil {
		q := "DROP DATABASE IF EXISTS " + in.db
		dctx := ctx
		if in.cluster {
			q += " ON CLUSTER " + in.settings["REVTRACK_CLICKHOUSE_CLUSTER"]
			// Dropping some forty replicated tables on 4 nodes takes ZooKeeper most of a minute;
			// nothing waits for it (the next instance has its own database), so the query hands the
			// work to the nodes' DDL queues and returns (a timeout answer says just that).
			dctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"distributed_ddl_task_timeout": 2}))
		}
		if err := srv.Exec(dctx, q); err != nil && !(in.cluster && strings.Contains(err.Error(), "code: 159")) {
			fmt.Fprintf(os.Stderr, "%s: %s: %v\n", in.shape, q, err)
		}
		_ = srv.Close()
	}
	fmt.Fprintf(os.Stderr, "%s %s removed in %v\n", in.shape, in.id, time.Since(start).Round(100*time.Millisecond))
}

func (in *instance) chConfig() clickhousex.Config {
	c := clickhousex.DefaultConfig()
	c.Addr, c.Database = in.settings["REVTRACK_CLICKHOUSE_ADDR"], in.db
	c.Username, c.Password = in.settings["REVTRACK_CLICKHOUSE_USERNAME"], in.settings["REVTRACK_CLICKHOUSE_PASSWORD"]
	c.ReadTimeout = time.Minute
	if in.cluster {
		c.Cluster = in.settings["REVTRACK_CLICKHOUSE_CLUSTER"]
	}
	return c
}

func (in *instance) redisConfig() redisx.Config {
	c := redisx.DefaultConfig()
	c.Addr, c.KeyPrefix, c.Cluster = in.settings["REVTRACK_REDIS_ADDR"], in.prefix, in.cluster
	return c
}

// conn is a ClickHouse connection to the instance's database as revtrack opens it (on the cluster:
// the Distributed tables, with the cluster's session settings).
func (in *instance) conn(t testing.TB) driver.Conn {
	t.Helper()
	c, err := clickhousex.Open(context.Background(), in.chConfig())
	if err != nil {
		t.Fatalf("%s: %v", in.shape, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// call makes one request with the instance's admin key and decodes a 2xx JSON answer into out (when
// not nil); it returns the status and the raw body.
func (in *instance) call(t testing.TB, client *http.Client, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, in.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+in.apiKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", in.shape, method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %s %s: %v: %s", in.shape, method, path, err, raw)
		}
	}
	return resp.StatusCode, raw
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
