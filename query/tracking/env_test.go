package tracking

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
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/schemas"
)

// The tests run the real processors to write what the store reads; their goroutines must end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	kc       kafkax.Config
	producer *kgo.Client
	ch       driver.Conn
	store    *Store
}

// setup migrates a fresh database, creates this test's topics on the real broker and starts the
// processors (sessionize, land-server-events, identity-join) until the test ends.
func setup(t *testing.T) env {
	t.Helper()
	db := pipeline.Migrated(t)
	conn := db.Conn
	kc, p := pipeline.Topics(t)

	cfg := processors.DefaultConfig()
	cfg.Backoff, cfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	svc, err := processors.New(cfg, processors.Deps{Kafka: kc, ClickHouse: conn, Producer: p, Registry: prometheus.NewRegistry(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	t.Cleanup(func() { // registered last: runs before the connections close
		cancel()
		if err := <-done; err != nil {
			t.Errorf("processors: %v", err)
		}
	})
	return env{kc: kc, producer: p, ch: conn, store: New(conn)}
}

func (e env) produce(t *testing.T, topic, key string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r := &kgo.Record{Topic: e.kc.Topic(topic), Key: []byte(key), Value: b}
	if err := e.producer.ProduceSync(testenv.Ctx(t), r).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func (e env) browser(t *testing.T, evs ...schemas.BrowserEvent) {
	t.Helper()
	for _, ev := range evs {
		e.produce(t, schemas.TopicBrowserEvents, ev.SourceID+":"+ev.AcquisitionID, ev)
	}
}

func (e env) server(t *testing.T, evs ...schemas.ServerEvent) {
	t.Helper()
	for _, ev := range evs {
		e.produce(t, schemas.TopicServerEvents, ev.SourceID+":"+ev.AcquisitionID, ev)
	}
}

func (e env) count(t *testing.T, query string) uint64 {
	t.Helper()
	var n uint64
	if err := e.ch.QueryRow(testenv.Ctx(t), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// eventually is testenv.Eventually, short for the many waits of these tests.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, cond)
}

// t0 is the scenario's reference time.
var t0 = time.Date(2026, 11, 10, 10, 0, 0, 0, time.UTC)

func pageView(id, source, acq string, at time.Duration, touch schemas.FirstTouch) schemas.BrowserEvent {
	ts := t0.Add(at)
	return schemas.BrowserEvent{EventID: id, SourceID: source, WorkspaceID: "ws", AppID: "app", AcquisitionID: acq,
		Name: "page_view", OccurredAt: ts, ReceivedAt: ts.Add(time.Second), URL: "https://app.example/" + id, Path: "/" + id,
		FirstTouch: touch}
}

func serverEvent(id, source, name, acq, shop string, at time.Duration) schemas.ServerEvent {
	ts := t0.Add(at)
	return schemas.ServerEvent{EventID: id, SourceID: source, WorkspaceID: "ws", AppID: "app", AcquisitionID: acq, Name: name,
		CustomerRef: shop, OccurredAt: ts, ReceivedAt: ts.Add(time.Second)}
}

func money(ev schemas.ServerEvent, cents int64, currency string) schemas.ServerEvent {
	ev.AmountCents, ev.Currency = &cents, currency
	return ev
}

// scope is the tests' workspace with its one app selected.
var scope = Scope{WorkspaceID: "ws", AppIDs: []string{"app"}}
