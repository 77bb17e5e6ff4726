package processors

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	kc       kafkax.Config
	producer *kgo.Client
	ch       driver.Conn
}

// setup migrates a fresh database and creates this test's topics on the real broker.
func setup(t *testing.T) env {
	t.Helper()
	db := pipeline.Migrated(t)
	kc, p := pipeline.Topics(t)
	return env{kc: kc, producer: p, ch: db.Conn}
}

func (e env) produce(t *testing.T, topic string, key string, value []byte) {
	t.Helper()
	r := &kgo.Record{Topic: e.kc.Topic(topic), Key: []byte(key), Value: value}
	if err := e.producer.ProduceSync(testenv.Ctx(t), r).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eventually is testenv.Eventually, short for the many waits of these tests.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, cond)
}

func startService(t *testing.T, e env) (stop func()) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Backoff, cfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	svc, err := New(cfg, Deps{Kafka: e.kc, ClickHouse: e.ch, Producer: e.producer, Registry: prometheus.NewRegistry(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service run: %v", err)
		}
	}
}

// TestProduceConsumeLandReadBack is the foundation's end-to-end check: produce to Kafka, consume
// with a consumer group, insert into ClickHouse and read back, all on the real services.
func TestProduceConsumeLandReadBack(t *testing.T) {
	e := setup(t)
	at := time.Date(2026, 11, 20, 10, 0, 0, 250e6, time.UTC)
	amount := int64(4900)
	paid := schemas.ServerEvent{EventID: "evt-1", SourceID: "src-1", WorkspaceID: "ws-1", AppID: "app-1", AcquisitionID: "acq-1",
		Name: "paid", CustomerRef: "shop-1.example", AmountCents: &amount, Currency: "USD", OccurredAt: at, ReceivedAt: at}
	install := paid
	install.EventID, install.Name, install.AmountCents, install.Currency = "evt-2", "install", nil, ""

	e.produce(t, schemas.TopicServerEvents, "src-1:acq-1", mustJSON(t, paid))
	e.produce(t, schemas.TopicServerEvents, "src-1:acq-1", mustJSON(t, install))
	e.produce(t, schemas.TopicServerEvents, "src-1:acq-1", mustJSON(t, paid))                         // redelivered duplicate
	e.produce(t, schemas.TopicServerEvents, "src-1:acq-1", []byte(`{"eventId":`))                     // poison: not JSON
	e.produce(t, schemas.TopicServerEvents, "src-1:acq-1", []byte(`{"eventId":"x","name":"bought"}`)) // breaks the contract

	stop := startService(t, e)
	defer stop()

	ctx := testenv.Ctx(t)
	eventually(t, "two distinct server events in ClickHouse", func() bool {
		var n uint64
		_ = e.ch.QueryRow(ctx, "SELECT count() FROM server_events FINAL").Scan(&n)
		return n == 2
	})
	var (
		name     string
		cents    *int64
		currency string
		occurred time.Time
		ms       uint16
	)
	if err := e.ch.QueryRow(ctx, "SELECT toString(name), amount_cents, currency, occurred_at, occurred_ms FROM server_events FINAL WHERE event_id = 'evt-1'").
		Scan(&name, &cents, &currency, &occurred, &ms); err != nil {
		t.Fatal(err)
	}
	if name != "paid" || cents == nil || *cents != 4900 || currency != "USD" || !occurred.Equal(at.Truncate(time.Second)) || ms != 250 {
		t.Fatalf("read back %s %v %s %s %d", name, cents, currency, occurred, ms)
	}

	// Both bad records are in the dead-letter topic with their reasons.
	reasons := readDeadLetters(t, e, 2)
	if reasons[ReasonDecodeError] != 1 || reasons[ReasonInvalidMessage] != 1 {
		t.Fatalf("dead letters by reason: %v", reasons)
	}

	// Offsets were committed after the write: the group's lag is zero.
	eventually(t, "committed offsets at the end of the topic", func() bool {
		lag, err := kadm.NewClient(e.producer).Lag(ctx, "revtrack.land-server-events"+e.kc.TopicSuffix)
		if err != nil {
			return false
		}
		l := lag["revtrack.land-server-events"+e.kc.TopicSuffix]
		return l.Error() == nil && l.Lag.Total() == 0
	})
}

func readDeadLetters(t *testing.T, e env, n int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range readDeadLetterRecords(t, e, "land-server-events", n) {
		if d.Topic != e.kc.Topic(schemas.TopicServerEvents) {
			t.Errorf("dead letter %+v", d)
		}
		out[d.Reason]++
	}
	return out
}

var jsonUnmarshal = json.Unmarshal

// TestRestartDoesNotDoubleCount stops the consumer after a first batch and restarts it with more
// records: the committed offsets mean only the new records are read, and the storage backstop keeps
// even a redelivered batch from counting twice.
func TestRestartDoesNotDoubleCount(t *testing.T) {
	e := setup(t)
	at := time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	ev := func(id string) []byte {
		return mustJSON(t, schemas.BrowserEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: "acq",
			Name: "page_view", OccurredAt: at, ReceivedAt: at, URL: "https://app.example/pricing", Path: "/pricing"})
	}
	ctx := testenv.Ctx(t)
	count := func() uint64 {
		var n uint64
		_ = e.ch.QueryRow(ctx, "SELECT count() FROM browser_events FINAL").Scan(&n)
		return n
	}
	for _, id := range []string{"b1", "b2", "b3"} {
		e.produce(t, schemas.TopicBrowserEvents, "src:acq", ev(id))
	}
	stop := startService(t, e)
	eventually(t, "three browser events", func() bool { return count() == 3 })
	stop()

	for _, id := range []string{"b3", "b4"} { // b3 is a client retry of the same event
		e.produce(t, schemas.TopicBrowserEvents, "src:acq", ev(id))
	}
	stop = startService(t, e)
	defer stop()
	eventually(t, "four distinct browser events", func() bool { return count() == 4 })
}

// assertPoisonAndDrained checks the usual ending of a consumer test that produced one undecodable
// and one contract-breaking record: both are dead-lettered with their reasons, and the consumer's
// group has committed to the end of its topic.
func assertPoisonAndDrained(t *testing.T, e env, consumer string) {
	t.Helper()
	reasons := map[string]int{}
	for _, d := range readDeadLetterRecords(t, e, consumer, 2) {
		reasons[d.Reason]++
	}
	if reasons[ReasonDecodeError] != 1 || reasons[ReasonInvalidMessage] != 1 {
		t.Fatalf("dead letters by reason: %v", reasons)
	}
	group := "revtrack." + consumer + e.kc.TopicSuffix
	eventually(t, "committed offsets at the end of the topic", func() bool {
		lag, err := kadm.NewClient(e.producer).Lag(testenv.Ctx(t), group)
		if err != nil {
			return false
		}
		l := lag[group]
		return l.Error() == nil && l.Lag.Total() == 0
	})
}
