package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// clusterFault is one node stopped under load and started again.
type clusterFault struct {
	node string
	// recovered says, once the node is back, whether the deployment is whole again (beyond the
	// acknowledged events having landed, which every fault waits for).
	recovered func(ctx context.Context) (bool, string)
}

// faultFigures is what the report gives for one fault.
type faultFigures struct {
	node                string
	down, recover       time.Duration // stop to start answered; start answered to recovered
	answers             answers
	ackedDuring, landed int
	note                string
}

// TestClusterFaultsUnderLoad sends a steady load of server and browser events through the edge of
// revtrack on the local cluster and stops, each in turn, one Kafka broker, one ClickHouse replica
// and one Redis primary, then starts it again. No acknowledged event may be lost or stored twice;
// with a broker down the edge keeps acknowledging; a Redis primary down refuses (503) only what
// needs its slots and never acknowledges an event without its dedup record; a ClickHouse replica
// that comes back catches up (both replicas of each shard hold the same rows).
func TestClusterFaultsUnderLoad(t *testing.T) {
	settings := clusterSettings(t)
	in := newInstance(t, "cluster", true, settings)
	in.seed(t, "gid://partners/App/1")
	in.start(t)
	nodes := chNodes(t, settings, in.db)
	adm := kafkaAdmin(t, settings)
	var topics []string
	for _, tp := range []string{schemas.TopicServerEvents, schemas.TopicBrowserEvents} {
		topics = append(topics, tp+in.suffix)
	}

	led := newLedger()
	load := &steadyLoad{c: newEdgeClient(in), led: led, serverRate: 20, browserRate: 5, resend: 0.1,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 18))}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { load.run(ctx, stop); close(done) }()
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			<-done
		}
	}()
	sleepCtx(ctx, 5*time.Second)

	faults := []clusterFault{
		{node: "kafka-2", recovered: func(ctx context.Context) (bool, string) { return inSync(ctx, adm, topics) }},
		{node: "clickhouse-s2r1", recovered: func(ctx context.Context) (bool, string) { return nodes.replicasAgree(ctx) }},
		{node: "redis-2", recovered: func(context.Context) (bool, string) { return true, "" }},
	}
	var figs []faultFigures
	for _, f := range faults {
		figs = append(figs, runFault(ctx, t, in, led, f))
		if t.Failed() {
			break
		}
		led.setPhase("between")
		sleepCtx(ctx, 3*time.Second)
	}
	led.setPhase("drain")
	close(stop)
	<-done
	stopped = true

	// The final accounting: every acknowledged event once in its landing table, none twice.
	conn := in.conn(t)
	var lost, doubled, sentN, ackedN int
	for _, browser := range []bool{false, true} {
		table := "server_events"
		if browser {
			table = "browser_events"
		}
		acked := led.ackedIDs(browser, time.Time{})
		ackedN += len(acked)
		waitLanded(ctx, t, conn, table, in.sourceID, acked, 90*time.Second)
		counts := eventCounts(ctx, t, conn, table+" FINAL", in.sourceID)
		for _, id := range acked {
			if counts[id] == 0 {
				lost++
				if lost <= 5 {
					t.Errorf("acknowledged %s event %s is not in %s", table, id, table)
				}
			}
		}
		for id, n := range counts {
			if n > 1 {
				doubled++
				if doubled <= 5 {
					t.Errorf("%s holds event %s %d times (FINAL)", table, id, n)
				}
			}
		}
	}
	led.mu.Lock()
	sentN = len(led.events)
	led.mu.Unlock()
	ok, detail := nodes.replicasAgree(ctx)
	if !ok {
		t.Errorf("replicas disagree at the end: %s", detail)
	}
	t.Logf("FAULTS events sent %d, acknowledged %d, lost %d, doubled %d; replicas at the end: %s", sentN, ackedN, lost, doubled, detail)
	for _, f := range figs {
		a := f.answers
		t.Logf("FAULT %s: down %v, recovered %v after it answered; requests %d: 2xx %d (%.1f%%), 503 %d, 429 %d, other 5xx %d, 4xx %d, transport errors %d; longest without a 2xx %v; refusals %v; %s",
			f.node, f.down.Round(time.Millisecond), f.recover.Round(time.Millisecond), a.total, a.ok, 100*float64(a.ok)/float64(max(a.total, 1)),
			a.unavailable, a.tooMany, a.other5xx, a.other4xx, a.transport, a.longestGap.Round(time.Millisecond), a.codes, f.note)
	}
}

// runFault stops the node under load, holds it down, starts it and waits until the deployment has
// recovered: the fault's own condition, and every event acknowledged since the fault landed.
func runFault(ctx context.Context, t *testing.T, in *instance, led *ledger, f clusterFault) faultFigures {
	t.Helper()
	fig := faultFigures{node: f.node}
	phase := "down:" + f.node
	led.setPhase(phase)
	begin := time.Now()
	stackNode(t, "stop", f.node)
	restarted := false
	defer func() {
		if !restarted {
			stackNode(t, "start", f.node)
		}
	}()
	sleepCtx(ctx, 10*time.Second)
	stackNode(t, "start", f.node)
	restarted = true
	fig.down = time.Since(begin)
	fig.answers = led.answersIn(phase)
	led.setPhase("back:" + f.node)
	back := time.Now()
	conn := in.conn(t)
	for {
		ok, note := f.recovered(ctx)
		fig.note = note
		if ok {
			acked := append(led.ackedIDs(false, begin), led.ackedIDs(true, begin)...)
			fig.ackedDuring = len(acked)
			if landedAll(ctx, t, conn, in.sourceID, led, begin) {
				break
			}
		}
		if time.Since(back) > 2*time.Minute {
			t.Errorf("%s: not recovered 2 minutes after it answered again (%s)", f.node, note)
			break
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
	fig.recover = time.Since(back)
	return fig
}

// landedAll says whether every event acknowledged since since is in its landing table.
func landedAll(ctx context.Context, t *testing.T, conn driver.Conn, sourceID string, led *ledger, since time.Time) bool {
	for _, browser := range []bool{false, true} {
		table := "server_events"
		if browser {
			table = "browser_events"
		}
		ids := led.ackedIDs(browser, since)
		if len(ids) == 0 {
			continue
		}
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+table+" WHERE source_id = ? AND event_id IN ?", sourceID, ids).Scan(&n); err != nil {
			t.Logf("landing check: %v", err)
			return false
		}
		if n < uint64(len(ids)) {
			return false
		}
	}
	return true
}

func waitLanded(ctx context.Context, t *testing.T, conn driver.Conn, table, sourceID string, ids []string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+table+" WHERE source_id = ?", sourceID).Scan(&n); err == nil && n >= uint64(len(ids)) {
			return
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
}

// eventCounts is how many rows readers see per event ID.
func eventCounts(ctx context.Context, t *testing.T, conn driver.Conn, from, sourceID string) map[string]uint64 {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT event_id, count() FROM "+from+" WHERE source_id = ? GROUP BY event_id", sourceID)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// chReplicas are the four ClickHouse nodes, by shard, each on the instance's database.
type chReplicas struct {
	db     string
	shards [2][2]driver.Conn
	names  [2][2]string
}

func chNodes(t *testing.T, settings map[string]string, db string) *chReplicas {
	t.Helper()
	others := strings.Split(settings["STACK_CLICKHOUSE_NODES"], ",")
	if len(others) != 3 {
		t.Fatalf("STACK_CLICKHOUSE_NODES = %q, want 3 nodes", settings["STACK_CLICKHOUSE_NODES"])
	}
	addrs := []string{settings["REVTRACK_CLICKHOUSE_ADDR"], others[0], others[1], others[2]}
	r := &chReplicas{db: db, names: [2][2]string{{"s1r1", "s1r2"}, {"s2r1", "s2r2"}}}
	for i, a := range addrs {
		r.shards[i/2][i%2] = openClickHouse(t, settings, a)
	}
	return r
}

// replicaTables are the landing tables whose replicas are compared.
var replicaTables = []string{"server_events_local", "browser_events_local", "funnel_events_local"}

// replicasAgree says whether both replicas of each shard hold as many rows of each landing table.
func (r *chReplicas) replicasAgree(ctx context.Context) (bool, string) {
	var parts []string
	ok := true
	for s := range r.shards {
		for _, table := range replicaTables {
			var n [2]uint64
			for rep := range 2 {
				qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err := r.shards[s][rep].QueryRow(qctx, fmt.Sprintf("SELECT count() FROM %s.%s", r.db, table)).Scan(&n[rep])
				cancel()
				if err != nil {
					return false, fmt.Sprintf("%s %s: %v", r.names[s][rep], table, err)
				}
			}
			if n[0] != n[1] {
				ok = false
			}
			parts = append(parts, fmt.Sprintf("shard %d %s %d/%d", s+1, strings.TrimSuffix(table, "_local"), n[0], n[1]))
		}
	}
	return ok, strings.Join(parts, ", ")
}

func kafkaAdmin(t *testing.T, settings map[string]string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(settings["REVTRACK_KAFKA_BROKERS"], ",")...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	t.Cleanup(adm.Close)
	return adm
}

// inSync says whether every partition of the topics has its 3 replicas in sync again.
func inSync(ctx context.Context, adm *kadm.Client, topics []string) (bool, string) {
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return false, err.Error()
	}
	behind := 0
	for _, tp := range topics {
		for _, p := range details[tp].Partitions {
			if len(p.ISR) != 3 {
				behind++
			}
		}
	}
	return behind == 0, fmt.Sprintf("%d partitions of the event topics without 3 in-sync replicas", behind)
}
