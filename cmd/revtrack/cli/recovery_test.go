package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

// subprocessArgs, when set, turns this test binary into `revtrack <args>`, so that a test can kill
// it with SIGKILL as an operator's crash would, which no in-process run can imitate.
const subprocessArgs = "REVTRACK_TEST_SUBPROCESS_ARGS"

func init() {
	v := os.Getenv(subprocessArgs)
	if v == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(v), &args); err != nil {
		fmt.Fprintln(os.Stderr, subprocessArgs, err)
		os.Exit(2)
	}
	os.Exit(cli.Execute(context.Background(), args, io.Discard, os.Stderr))
}

// member is one `revtrack process` running as a child process.
type member struct {
	cmd  *exec.Cmd
	addr string
	log  string
}

// spawn starts `revtrack process` on addr and returns once its /readyz answers 200.
func spawn(t *testing.T, kc kafkax.Config, db pipeline.DB, addr string, extra ...string) *member {
	t.Helper()
	m := startProcess(t, kc, db, addr, extra...)
	deadline := time.Now().Add(60 * time.Second)
	for getReady(addr).code != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("revtrack process not ready within 60s:\n%s", m.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return m
}

// startProcess starts `revtrack process` on addr.
func startProcess(t *testing.T, kc kafkax.Config, db pipeline.DB, addr string, extra ...string) *member {
	t.Helper()
	args, _ := json.Marshal(append([]string{"process", "--http-addr", addr, "--kafka-brokers", strings.Join(kc.Brokers, ","),
		"--kafka-topic-suffix", kc.TopicSuffix, "--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database,
		"--redis-addr", db.RedisC.Addr, "--redis-key-prefix", db.RedisC.KeyPrefix, "--process-backoff", "50ms",
		"--allow-development-encryption-key"}, extra...))
	logPath := filepath.Join(t.TempDir(), "revtrack.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), subprocessArgs+"="+string(args))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &member{cmd: cmd, addr: addr, log: logPath}
	t.Cleanup(m.kill)
	return m
}

// kill ends the process with SIGKILL: no commit, no LeaveGroup, the sockets simply close.
func (m *member) kill() {
	if m.cmd.ProcessState == nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}

func (m *member) logs() string { b, _ := os.ReadFile(m.log); return string(b) }

func serverEventPartitions() int32 {
	for _, tp := range schemas.Topics() {
		if tp.Name == schemas.TopicServerEvents {
			return tp.Partitions
		}
	}
	panic("no server-events topic declared")
}

// landing produces one server event to every partition of the server-events topic and measures how
// long until all of them are in server_events.
type landing struct {
	t        *testing.T
	kc       kafkax.Config
	db       pipeline.DB
	producer *kgo.Client
	rounds   int
}

func (l *landing) produceRound() string {
	l.t.Helper()
	l.rounds++
	prefix := fmt.Sprintf("recovery-%d-", l.rounds)
	now := time.Now().UTC()
	var recs []*kgo.Record
	for p := range serverEventPartitions() {
		v, _ := json.Marshal(schemas.ServerEvent{EventID: fmt.Sprintf("%s%d", prefix, p), SourceID: "s", WorkspaceID: "w",
			AppID: "app", Name: "install", OccurredAt: now.Add(-time.Minute), ReceivedAt: now})
		recs = append(recs, &kgo.Record{Topic: l.kc.Topic(schemas.TopicServerEvents), Partition: p, Key: []byte("k"), Value: v})
	}
	if err := l.producer.ProduceSync(testenv.Ctx(l.t), recs...).FirstErr(); err != nil {
		l.t.Fatal(err)
	}
	return prefix
}

// waitLanded returns when every event of the round is in server_events, or fails after limit.
func (l *landing) waitLanded(prefix string, limit time.Duration, m *member) {
	l.t.Helper()
	want := uint64(serverEventPartitions())
	deadline := time.Now().Add(limit)
	for {
		var n uint64
		if err := l.db.Conn.QueryRow(testenv.Ctx(l.t), "SELECT uniqExact(event_id) FROM server_events WHERE event_id LIKE ?", prefix+"%").Scan(&n); err != nil {
			l.t.Fatal(err)
		}
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("%d of %d events of %s landed after %s; the consumer's log:\n%s", n, want, prefix, limit, m.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsumerRecovery kills `revtrack process` with SIGKILL twice. Restarted at once on the same
// host and port, it resumes its partitions (static membership: no wait for the old session, no
// rebalance); killed for good beside a second member, its partitions move to that survivor after
// the session timeout. The bounds asserted here are loose for a loaded machine; docs/BENCHMARKS.md
// has the measured figures (targets: 5 s and 10 s).
func TestConsumerRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills revtrack processes")
	}
	db := pipeline.Migrated(t)
	kc, _ := pipeline.Topics(t)
	producer, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	l := &landing{t: t, kc: kc, db: db, producer: producer}

	addr1 := runapp.FreeAddr(t)
	first := spawn(t, kc, db, addr1)
	l.waitLanded(l.produceRound(), 30*time.Second, first)

	start := time.Now()
	first.kill()
	restarted := spawn(t, kc, db, addr1)
	ready := time.Since(start)
	l.waitLanded(l.produceRound(), 15*time.Second, restarted)
	t.Logf("kill -9 and restart: ready after %.1fs, every partition landing again after %.1fs", ready.Seconds(), time.Since(start).Seconds())

	// A second process on the same host and port would derive the same instance IDs: it must stop
	// before joining, rather than fence the running member.
	twin := startProcess(t, kc, db, addr1)
	exited := make(chan error, 1)
	go func() { exited <- twin.cmd.Wait() }()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(twin.logs(), "address already in use") {
			t.Fatalf("a second process on %s: %v\n%s", addr1, err, twin.logs())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("a second process on %s still runs:\n%s", addr1, twin.logs())
	}
	l.waitLanded(l.produceRound(), 5*time.Second, restarted)
	if strings.Contains(restarted.logs(), "FENCED_INSTANCE_ID") {
		t.Fatalf("the running member was fenced:\n%s", restarted.logs())
	}

	second := spawn(t, kc, db, runapp.FreeAddr(t))
	group := "revtrack.land-server-events" + kc.TopicSuffix
	waitMembers(t, producer, group, 2)
	l.waitLanded(l.produceRound(), 30*time.Second, second)

	start = time.Now()
	restarted.kill()
	l.waitLanded(l.produceRound(), 15*time.Second, second)
	t.Logf("kill -9 of one of two members: every partition landing again after %.1fs", time.Since(start).Seconds())
}

// waitMembers waits until group is stable with n members that each own partitions.
func waitMembers(t *testing.T, cl *kgo.Client, group string, n int) {
	t.Helper()
	adm := kadm.NewClient(cl)
	testenv.Eventually(t, fmt.Sprintf("%s to have %d members with partitions", group, n), func() bool {
		described, err := adm.DescribeGroups(testenv.Ctx(t), group)
		if err != nil {
			return false
		}
		g := described[group]
		if g.Err != nil || g.State != "Stable" || len(g.Members) != n {
			return false
		}
		for _, m := range g.Members {
			a, ok := m.Assigned.AsConsumer()
			if !ok || len(a.Topics) == 0 {
				return false
			}
		}
		return true
	})
}
