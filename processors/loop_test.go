package processors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/schemas"
)

// scriptedSink is a ClickHouse stand-in for exercising the loop's failure paths: it fails the
// first `transient` writes, refuses items whose ID is in `poison`, and records what it accepted.
type scriptedSink struct {
	mu        sync.Mutex
	transient int
	poison    map[string]bool
	accepted  []string
	calls     int
}

func (s *scriptedSink) Write(_ context.Context, batch []schemas.ServerEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.transient > 0 {
		s.transient--
		return errors.New("connection reset by peer")
	}
	for _, e := range batch {
		if s.poison[e.EventID] {
			return &RejectedError{Err: errors.New("code: 53, TYPE_MISMATCH")}
		}
	}
	for _, e := range batch {
		s.accepted = append(s.accepted, e.EventID)
	}
	return nil
}

func (s *scriptedSink) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.accepted...)
}

// TestLoopRetriesTransientAndIsolatesRejected runs the loop on the real broker: transient sink
// failures are retried without loss or commit, and a record the sink refuses is dead-lettered alone
// while the rest of its batch lands.
func TestLoopRetriesTransientAndIsolatesRejected(t *testing.T) {
	e := setup(t)
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "poison", "c"} {
		e.produce(t, schemas.TopicServerEvents, "k", mustJSON(t, schemas.ServerEvent{EventID: id, SourceID: "s", WorkspaceID: "w",
			AppID: "app", Name: "install", OccurredAt: at, ReceivedAt: at}))
	}
	sink := &scriptedSink{transient: 2, poison: map[string]bool{"poison": true}}
	group := "loop-test" + e.kc.TopicSuffix
	cl, err := kafkax.NewConsumer(e.kc, "loop-test", group, []string{e.kc.Topic(schemas.TopicServerEvents)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	loop := &Loop[schemas.ServerEvent]{Name: "loop-test", Consumer: cl, Decode: decodeJSON[schemas.ServerEvent], Sink: sink,
		DeadLetters: &DeadLetterWriter{Producer: e.producer, Topic: e.kc.Topic(schemas.TopicDeadLetters)},
		Metrics:     NewLoopMetrics(prometheus.NewRegistry(), "loop-test"), Log: quiet, MaxPoll: 100,
		Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()

	eventually(t, "a, b and c accepted", func() bool { return len(sink.snapshot()) == 3 })
	got := sink.snapshot()
	for i, want := range []string{"a", "b", "c"} {
		if got[i] != want {
			t.Fatalf("accepted %v", got)
		}
	}
	dead := readDeadLetterRecords(t, e, "loop-test", 1)
	if dead[0].Reason != ReasonSinkRejected || dead[0].Offset != 2 {
		t.Fatalf("dead letter %+v", dead[0])
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLoopDoesNotCommitUnwrittenRecords stops the loop while the sink is failing: nothing is
// committed, so a new consumer in the same group receives every record again.
func TestLoopDoesNotCommitUnwrittenRecords(t *testing.T) {
	e := setup(t)
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"x", "y"} {
		e.produce(t, schemas.TopicServerEvents, "k", mustJSON(t, schemas.ServerEvent{EventID: id, SourceID: "s", WorkspaceID: "w",
			AppID: "app", Name: "install", OccurredAt: at, ReceivedAt: at}))
	}
	run := func(sink *scriptedSink, until func() bool) {
		loop, cl := newTestLoop(t, e, "uncommitted", sink)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- loop.Run(ctx) }()
		eventually(t, "the loop to reach its state", until)
		cancel()
		<-done
		cl.Close()
	}
	failing := &scriptedSink{transient: 1 << 30}
	run(failing, func() bool { failing.mu.Lock(); defer failing.mu.Unlock(); return failing.calls >= 3 })

	healthy := &scriptedSink{}
	run(healthy, func() bool { return len(healthy.snapshot()) == 2 })
}

// newTestLoop builds a loop over the test's server-events topic; the consumer group is named after
// the loop, so two loops with one name resume each other's offsets.
func newTestLoop(t *testing.T, e env, name string, sink Sink[schemas.ServerEvent]) (*Loop[schemas.ServerEvent], *kgo.Client) {
	t.Helper()
	cl, err := kafkax.NewConsumer(e.kc, name, name+e.kc.TopicSuffix, []string{e.kc.Topic(schemas.TopicServerEvents)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Loop[schemas.ServerEvent]{Name: name, Consumer: cl, Decode: decodeJSON[schemas.ServerEvent], Sink: sink,
		DeadLetters: &DeadLetterWriter{Producer: e.producer, Topic: e.kc.Topic(schemas.TopicDeadLetters)},
		Metrics:     NewLoopMetrics(prometheus.NewRegistry(), name), Log: quiet, MaxPoll: 100,
		Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, cl
}

func readDeadLetterRecords(t *testing.T, e env, consumer string, n int) []schemas.DeadLetter {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.Brokers...), kgo.ConsumeTopics(e.kc.Topic(schemas.TopicDeadLetters)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []schemas.DeadLetter
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("only %d dead letters arrived", len(out))
		}
		fs.EachRecord(func(r *kgo.Record) {
			var d schemas.DeadLetter
			if err := jsonUnmarshal(r.Value, &d); err != nil {
				t.Fatal(err)
			}
			if d.Consumer == consumer {
				out = append(out, d)
			}
		})
	}
	return out
}
