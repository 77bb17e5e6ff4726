package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// pipelineLog records the number of commands of every pipeline sent while it is on.
type pipelineLog struct {
	mu    sync.Mutex
	on    bool
	sizes []int
}

func (l *pipelineLog) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (l *pipelineLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (l *pipelineLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		l.mu.Lock()
		if l.on {
			l.sizes = append(l.sizes, len(cmds))
		}
		l.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (l *pipelineLog) record(f func()) []int {
	l.mu.Lock()
	l.on, l.sizes = true, nil
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.sizes
}

// TestAdmissionsShareRoundTrips: concurrent admissions go to Redis together, and each still gets its
// own answer: every request is counted once, each event ID is reserved by exactly one of the two
// requests that carry it, the counted limit refuses the same number as one by one would, and a
// Redis that lost its scripts (SCRIPT FLUSH) is answered by loading them again.
func TestAdmissionsShareRoundTrips(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	testenv.AwayFromMinuteEdge(t, 30*time.Second)
	if r := e.serverEvent(t, e.sk, nil); r.status != 202 { // the edge learns the source's records
		t.Fatalf("learn: %d %v", r.status, r.body)
	}
	sizes := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sizes"})
	p := newAdmitPipeline(e.admitter, 5*time.Second, sizes)
	ref := newEdgeRef(e.store, e.src.ID, e.src.WorkspaceID)
	query := func(eventID, token string, limit int) edgeQuery {
		return edgeQuery{ref: ref, mode: modeAdmit, publicKey: e.src.PublicKey, keyHash: controlplane.HashKey(e.sk),
			teamSlug: "acme", limitKey: ref.serverLimit, limit: Limit{N: limit, Window: time.Minute}, eventID: eventID, token: token}
	}
	// admitAll runs n admissions at once, two per event ID, and returns their answers by event ID.
	admitAll := func(n, limit int) map[string][]edgeResult {
		t.Helper()
		var mu sync.Mutex
		got := map[string][]edgeResult{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				id := fmt.Sprintf("evt-%s-%d", t.Name(), i/2)
				r, err := p.AdmitEdge(ctx, query(id, testenv.ID(), limit))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[id] = append(got[id], r)
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		return got
	}
	log := &pipelineLog{}
	e.db.Redis.AddHook(log)

	var got map[string][]edgeResult
	piped := log.record(func() { got = admitAll(200, 1000) })
	if len(got) != 100 {
		t.Fatalf("answers for %d event IDs, want 100", len(got))
	}
	for id, rs := range got {
		if len(rs) != 2 || rs[0].status != statusOK || rs[1].status != statusOK || rs[0].appID != e.src.AppID {
			t.Fatalf("%s: %+v", id, rs)
		}
		if a, b := rs[0].state, rs[1].state; !(a == stateNew && b == statePending) && !(a == statePending && b == stateNew) {
			t.Fatalf("%s: states %v and %v, want one new and one pending", id, rs[0].state, rs[1].state)
		}
	}
	shared := 0
	for _, n := range piped {
		if n > 1 {
			shared += n
		}
	}
	if shared == 0 {
		t.Fatalf("no round trip carried more than one admission: pipelines %v", piped)
	}
	window := e.admitter.Limiter.windowKey(ref.serverLimit, Limit{N: 1000, Window: time.Minute})
	if n, err := e.db.Redis.Get(ctx, window).Int(); err != nil || n != 201 {
		t.Fatalf("counted %d (%v), want 201 (the learning request and 200)", n, err)
	}

	// The limit: 201 counted already, 50 more allowed of 120 at once.
	got = admitAll(120, 251)
	rated := 0
	for _, rs := range got {
		for _, r := range rs {
			rated += btoi(r.status == "rate")
		}
	}
	if rated != 70 {
		t.Fatalf("%d refused over the limit, want 70", rated)
	}

	if err := e.db.Redis.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	got = admitAll(40, 1_000_000)
	for id, rs := range got {
		if len(rs) != 2 || rs[0].status != statusOK || rs[1].status != statusOK {
			t.Fatalf("after SCRIPT FLUSH, %s: %+v", id, rs)
		}
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.AdmitEdge(gone, query("evt-gone", testenv.ID(), 1_000_000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	if r, err := p.AdmitEdge(ctx, query("evt-after", testenv.ID(), 1_000_000)); err != nil || r.status != statusOK || r.state != stateNew {
		t.Fatalf("after a cancelled request: %+v %v", r, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
