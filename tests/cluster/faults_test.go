package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

// clusterFault is one node stopped under load and started again.
type clusterFault struct {
	node string
	// ready says whether the deployment is whole before the fault (a broker stopped while a
	// partition has fewer than 3 replicas in sync would take it below min.insync.replicas).
	ready func(ctx context.Context) (bool, string)
	// recovered says, once the node is back, whether the deployment is whole again (beyond the
	// acknowledged events having landed, which every fault waits for).
	recovered func(ctx context.Context) (bool, string)
}

// faultFigures is what the report gives for one fault.
type faultFigures struct {
	node                string
	down, recover       time.Duration // stop to start answered; start answered to recovered
	answers             answers
	okWhileDown         int // 2xx answers to requests made wholly while the node was stopped
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
	synced := func(ctx context.Context) (bool, string) { return inSync(ctx, adm, topics) }
	agree := func(ctx context.Context) (bool, string) { return nodes.replicasAgree(ctx) }
	always := func(context.Context) (bool, string) { return true, "" }

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
	sleepCtx(ctx, 10*time.Second)
	// The same-run baseline: the edge's answers with every node up.
	base := led.answersIn("warmup")

	faults := []clusterFault{
		{node: "kafka-2", ready: synced, recovered: synced},
		{node: "clickhouse-s2r1", ready: agree, recovered: nodes.caughtUp(1, 0)},
		{node: redisOwner(t, settings, in.workspaceID), ready: always, recovered: always},
	}
	var figs []faultFigures
	for _, f := range faults {
		// Each fault runs even when an earlier one failed its checks: its figures are wanted too.
		figs = append(figs, runFault(ctx, t, in, led, f))
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
	// The last writes may still be replicating: the replicas get a minute to agree.
	ok, detail := nodes.replicasAgree(ctx)
	for end := time.Now().Add(time.Minute); !ok && time.Now().Before(end); ok, detail = nodes.replicasAgree(ctx) {
		sleepCtx(ctx, time.Second)
	}
	if !ok {
		t.Errorf("replicas disagree a minute after the load: %s", detail)
	}
	t.Logf("FAULTS events sent %d, acknowledged %d, lost %d, doubled %d; replicas at the end: %s", sentN, ackedN, lost, doubled, detail)
	t.Logf("BASELINE every node up (10 s): requests %d: 2xx %d (%.1f%%), 503 %d, longest without a 2xx %v; refusals %v",
		base.total, base.ok, 100*float64(base.ok)/float64(max(base.total, 1)), base.unavailable, base.longestGap.Round(time.Millisecond), base.codes)
	for _, f := range figs {
		a := f.answers
		switch {
		case strings.HasPrefix(f.node, "kafka") && float64(a.ok) < 0.9*float64(a.total):
			// Two of three replicas stay in sync: acks=all writes go on once leadership has moved.
			t.Errorf("%s down: the edge acknowledged %d of %d requests, want at least 90%%", f.node, a.ok, a.total)
		case strings.HasPrefix(f.node, "redis") && f.okWhileDown > 0:
			// The workspace's edge records, rate limits and event-ID reservations share its hash
			// tag, so its slot, on this primary: nothing of it can be deduplicated while it is down.
			t.Errorf("%s down: %d requests of the workspace whose slot it serves were acknowledged", f.node, f.okWhileDown)
		case a.other5xx > 0 || a.transport > 0:
			// A refusal is a 503 (or 429) with Retry-After: never a 500, never a dropped connection.
			t.Errorf("%s down: %d 5xx other than 503 and %d transport errors", f.node, a.other5xx, a.transport)
		}
		t.Logf("FAULT %s: down %v, recovered %v after it answered; requests %d (2xx wholly while down: %d): 2xx %d (%.1f%%), 503 %d, 429 %d, other 5xx %d, 4xx %d, transport errors %d; longest without a 2xx %v; refusals %v; %s",
			f.node, f.down.Round(time.Millisecond), f.recover.Round(time.Millisecond), a.total, f.okWhileDown, a.ok, 100*float64(a.ok)/float64(max(a.total, 1)),
			a.unavailable, a.tooMany, a.other5xx, a.other4xx, a.transport, a.longestGap.Round(time.Millisecond), a.codes, f.note)
	}
}

// runFault stops the node under load, holds it down, starts it and waits until the deployment has
// recovered: the fault's own condition, and every event acknowledged since the fault landed.
func runFault(ctx context.Context, t *testing.T, in *instance, led *ledger, f clusterFault) faultFigures {
	t.Helper()
	fig := faultFigures{node: f.node}
	for start := time.Now(); ; {
		ok, note := f.ready(ctx)
		if ok {
			break
		}
		if time.Since(start) > time.Minute {
			t.Errorf("%s: the cluster was not whole a minute before the fault: %s", f.node, note)
			return fig
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
	phase := "down:" + f.node
	led.setPhase(phase)
	begin := time.Now()
	stackNode(t, "stop", f.node)
	downFrom := time.Now()
	restarted := false
	defer func() {
		if !restarted {
			stackNode(t, "start", f.node)
		}
	}()
	sleepCtx(ctx, 10*time.Second)
	fig.okWhileDown = led.okBetween(downFrom, time.Now())
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
		var n uint64
		for chunk := range slices.Chunk(ids, 2000) {
			set := make([]any, len(chunk))
			for i, id := range chunk {
				set[i] = id
			}
			var got uint64
			if err := conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+table+" WHERE source_id = ? AND event_id IN ?",
				sourceID, clickhouse.GroupSet{Value: set}).Scan(&got); err != nil {
				t.Logf("landing check: %v", err)
				return false
			}
			n += got
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

// redisOwner is the Redis node (redis-1..3) whose slots hold the workspace's hash tag: its edge
// records, rate limits and event-ID reservations.
func redisOwner(t *testing.T, settings map[string]string, workspaceID string) string {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(settings["REVTRACK_REDIS_ADDR"], ",")})
	defer rdb.Close()
	slots, err := rdb.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	slot := redisx.Slot("{" + workspaceID + "}")
	for _, s := range slots {
		if slot >= s.Start && slot <= s.End && len(s.Nodes) > 0 {
			// deploy/local: redis-N listens on 5637N.
			return "redis-" + strings.TrimPrefix(s.Nodes[0].Addr[strings.LastIndexByte(s.Nodes[0].Addr, ':')+1:], "5637")
		}
	}
	t.Fatalf("no Redis node serves slot %d", slot)
	return ""
}

// caughtUp returns a check that the given replica of shard s holds at least the rows its peer held
// when the check first ran (the load keeps writing, so the two are rarely equal at one instant).
func (r *chReplicas) caughtUp(s, rep int) func(ctx context.Context) (bool, string) {
	var want []uint64
	counts := func(ctx context.Context, conn driver.Conn) ([]uint64, error) {
		var out []uint64
		for _, table := range replicaTables {
			var n uint64
			if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM %s.%s", r.db, table)).Scan(&n); err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	return func(ctx context.Context) (bool, string) {
		if want == nil {
			c, err := counts(ctx, r.shards[s][1-rep])
			if err != nil {
				return false, err.Error()
			}
			want = c
		}
		got, err := counts(ctx, r.shards[s][rep])
		if err != nil {
			return false, err.Error()
		}
		for i := range want {
			if got[i] < want[i] {
				return false, fmt.Sprintf("%s behind %s: %v of %v rows", r.names[s][rep], r.names[s][1-rep], got, want)
			}
		}
		return true, fmt.Sprintf("%s caught up with %s's %v rows (%v)", r.names[s][rep], r.names[s][1-rep], want, replicaTables)
	}
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
