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
	stop, start         time.Duration // how long `node stop` and `node start` (until it answers) took
	down, recover       time.Duration // stop to start answered; start answered to recovered
	whole               time.Duration // start answered to the fault's own condition (before landing)
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
	ctx0 := context.Background()
	t0 := time.Now()
	at := func(what string) { t.Logf("+%v %s", time.Since(t0).Round(100*time.Millisecond), what) }
	// The comparison's cluster deployment when it ran first (its events share the source: the
	// accounting below is by the load's own IDs, and no event of the source may be stored twice).
	in := sharedCluster()
	if in == nil {
		in = newInstance(t, "cluster", true, settings)
		in.seed(t, "gid://partners/App/1")
		in.start(t)
	}
	at("instance up")
	nodes := chNodes(t, settings, in.db)
	adm := kafkaAdmin(t, settings)
	var topics []string
	for _, tp := range []string{schemas.TopicServerEvents, schemas.TopicBrowserEvents} {
		topics = append(topics, tp+in.suffix)
	}
	synced := func(ctx context.Context) (bool, string) { return inSync(ctx, adm, topics) }
	whole := func(ctx context.Context) (bool, string) { return kafkaWhole(ctx, adm) }
	agree := func(ctx context.Context) (bool, string) { return nodes.replicasAgree(ctx) }
	always := func(context.Context) (bool, string) { return true, "" }
	// Before any load: a broker that answers but no longer replicates from another (it happened
	// here: a replica fetcher thread dead after the disk filled) fails the baseline and every fault
	// that follows, for a reason that is not revtrack's; say so at once.
	if !waitUntil(ctx0, time.Minute, whole) {
		_, note := whole(ctx0)
		t.Fatalf("the Kafka cluster is not whole with every broker up: %s; a broker that stopped replicating still answers: "+
			"restart it (deploy/local/stack node stop kafka-N; deploy/local/stack node start kafka-N) and look for \"Error due to\" in its server.log", note)
	}
	if ok, note := synced(ctx0); !ok {
		t.Fatalf("the instance's event topics: %s", note)
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
	sleepCtx(ctx, 10*time.Second)
	// The same-run baseline: the edge's answers with every node up.
	base := led.answersIn("warmup")

	faults := []clusterFault{
		{node: "kafka-2", ready: whole, recovered: whole},
		{node: "clickhouse-s2r1", ready: agree, recovered: nodes.caughtUp(1, 0)},
		{node: redisOwner(t, settings, in.workspaceID), ready: always, recovered: always},
	}
	var figs []faultFigures
	for _, f := range faults {
		// Each fault runs even when an earlier one failed its checks: its figures are wanted too.
		figs = append(figs, runFault(ctx, t, in, led, f))
		led.setPhase("between")
		sleepCtx(ctx, time.Second)
	}
	at("faults done")
	led.setPhase("drain")
	close(stop)
	<-done
	stopped = true

	// The final accounting: every acknowledged event once in its landing table, none twice.
	at("load stopped")
	conn := in.conn(t)
	var lost, doubled, sentN, ackedN int
	for _, browser := range []bool{false, true} {
		table := "server_events"
		if browser {
			table = "browser_events"
		}
		acked := led.ackedIDs(browser, time.Time{}, time.Now())
		ackedN += len(acked)
		waitUntil(ctx, 90*time.Second, func(ctx context.Context) (bool, string) {
			return landedAll(ctx, t, conn, in.sourceID, led), ""
		})
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
	at("accounted")
	if !ok {
		t.Errorf("replicas disagree a minute after the load: %s", detail)
	}
	t.Logf("FAULTS events sent %d, acknowledged %d, lost %d, doubled %d; replicas at the end: %s", sentN, ackedN, lost, doubled, detail)
	baseRate := 100 * float64(base.ok) / float64(max(base.total, 1))
	t.Logf("BASELINE every node up (10 s): requests %d: 2xx %d (%.1f%%), 503 %d, longest without a 2xx %v; refusals %v",
		base.total, base.ok, baseRate, base.unavailable, base.longestGap.Round(time.Millisecond), base.codes)
	if baseRate < minBaseRate {
		// Every refusal with every node up is a fault of the deployment (the limits are far above
		// the load): a partition whose replicas do not follow its leader is the one seen so far.
		t.Errorf("every node up: the edge acknowledged %.1f%% of requests, want at least %.0f%% (refusals %v)", baseRate, minBaseRate, base.codes)
	}
	for _, f := range figs {
		a := f.answers
		rate := 100 * float64(a.ok) / float64(max(a.total, 1))
		if strings.HasPrefix(f.node, "kafka") && f.whole > kafkaWholeWithin {
			t.Errorf("%s: every partition of the cluster back to 3 in-sync replicas %v after the broker answered, want within %v",
				f.node, f.whole.Round(time.Millisecond), kafkaWholeWithin)
		}
		switch {
		case strings.HasPrefix(f.node, "kafka") && rate < baseRate-brokerDownMargin:
			// Two of three replicas stay in sync: acks=all writes go on once leadership has moved.
			t.Errorf("%s down: the edge acknowledged %.1f%% of requests (%d of %d), want within %.0f points of the %.1f%% with every node up",
				f.node, rate, a.ok, a.total, brokerDownMargin, baseRate)
		case strings.HasPrefix(f.node, "redis") && f.okWhileDown > 0:
			// The workspace's edge records, rate limits and event-ID reservations share its hash
			// tag, so its slot, on this primary: nothing of it can be deduplicated while it is down.
			t.Errorf("%s down: %d requests of the workspace whose slot it serves were acknowledged", f.node, f.okWhileDown)
		case a.other5xx > 0 || a.transport > 0:
			// A refusal is a 503 (or 429) with Retry-After: never a 500, never a dropped connection.
			t.Errorf("%s down: %d 5xx other than 503 and %d transport errors", f.node, a.other5xx, a.transport)
		}
		t.Logf("FAULT %s: down %v (stop %v, start until it answered %v), whole %v and recovered %v after it answered; requests %d (2xx wholly while down: %d): 2xx %d (%.1f%%), 503 %d, 429 %d, other 5xx %d, 4xx %d, transport errors %d; longest without a 2xx %v; refusals %v; %s",
			f.node, f.down.Round(time.Millisecond), f.stop.Round(time.Millisecond), f.start.Round(time.Millisecond), f.whole.Round(time.Millisecond),
			f.recover.Round(time.Millisecond), a.total, f.okWhileDown, a.ok, rate,
			a.unavailable, a.tooMany, a.other5xx, a.other4xx, a.transport, a.longestGap.Round(time.Millisecond), a.codes, f.note)
	}
}

// The bounds of the faults' checks.
const (
	// minBaseRate is the share of requests (%) the edge must acknowledge with every node up.
	minBaseRate = 97.0
	// brokerDownMargin is how many points below the every-node-up share the edge may acknowledge
	// with one broker down: leadership moves in a controlled shutdown, so only the requests whose
	// records were in flight to the stopping broker wait for a retry.
	brokerDownMargin = 5.0
	// kafkaWholeWithin bounds the time from a returning broker answering until every partition of
	// the cluster has its 3 replicas in sync again.
	kafkaWholeWithin = 30 * time.Second
)

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
	fig.stop = downFrom.Sub(begin)
	restarted := false
	defer func() {
		if !restarted {
			stackNode(t, "start", f.node)
		}
	}()
	sleepCtx(ctx, 10*time.Second)
	fig.okWhileDown = led.okBetween(downFrom, time.Now())
	startFrom := time.Now()
	stackNode(t, "start", f.node)
	restarted = true
	fig.start = time.Since(startFrom)
	fig.down = time.Since(begin)
	fig.answers = led.answersIn(phase)
	led.setPhase("back:" + f.node)
	back := time.Now()
	lastNote, wholeAt := back, time.Time{}
	conn := in.conn(t)
	for {
		ok, note := f.recovered(ctx)
		fig.note = note
		if ok && fig.whole == 0 {
			fig.whole = time.Since(back)
		}
		if ok {
			// The events acknowledged from the stop until the deployment was whole again: those
			// acknowledged later are the final accounting's (under a steady load the latest are
			// always a moment from landing, so "every one so far" is rarely true at one instant).
			if wholeAt.IsZero() {
				wholeAt = time.Now()
			}
			n, acked := notLanded(ctx, t, conn, in.sourceID, led, begin, wholeAt)
			fig.ackedDuring = acked
			if n == 0 {
				break
			}
			if time.Since(lastNote) > 5*time.Second {
				lastNote = time.Now()
				t.Logf("%s: +%v after it answered: %d of the %d events acknowledged from the stop until it was whole not landed yet",
					f.node, time.Since(back).Round(100*time.Millisecond), n, acked)
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

// landedAll says whether every event acknowledged so far is in its landing table.
func landedAll(ctx context.Context, t *testing.T, conn driver.Conn, sourceID string, led *ledger) bool {
	n, _ := notLanded(ctx, t, conn, sourceID, led, time.Time{}, time.Now())
	return n == 0
}

// notLanded counts the events acknowledged in [from, to] that are not in their landing table (-1:
// the check failed), and how many were acknowledged then.
func notLanded(ctx context.Context, t *testing.T, conn driver.Conn, sourceID string, led *ledger, from, to time.Time) (int, int) {
	missing, total := 0, 0
	for _, browser := range []bool{false, true} {
		table := "server_events"
		if browser {
			table = "browser_events"
		}
		ids := led.ackedIDs(browser, from, to)
		total += len(ids)
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
				return -1, total
			}
			n += got
		}
		missing += len(ids) - int(n)
	}
	return missing, total
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
