package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/schemas"
)

// These tests run the edge on the real broker through a proxy of their own (proxy_test.go), which
// makes the broker hang (stall) or go away (down) for this test's producer only.

// outageConfig waits for Kafka one second, so the tests see the bound quickly.
func outageConfig() Config {
	cfg := DefaultConfig()
	cfg.ProduceTimeout = time.Second
	return cfg
}

// answerBound is the stated bound of docs/TRACKING.md: the produce timeout plus the Redis round
// trips before it. The slack is for those round trips on a loaded test machine; without the bound
// the request would wait as long as the broker hangs (or, down, the 10 s delivery timeout).
func answerBound(cfg Config) time.Duration { return cfg.ProduceTimeout + 2*time.Second }

// newProxiedEdge is an edge whose producer reaches the broker only through the returned proxy.
func newProxiedEdge(t *testing.T, cfg Config, pendingTTL time.Duration) (*edge, *brokerProxy) {
	t.Helper()
	var proxy *brokerProxy
	e := newEdgeWith(t, cfg, edgeOptions{pendingTTL: pendingTTL, producer: func(kc kafkax.Config, _ *kgo.Client) Producer {
		proxy = newBrokerProxy(t, kc.Brokers[0])
		return producerVia(t, kc, proxy)
	}})
	// Runs first: the test server's Close waits for every request, and one waiting on a hung or
	// absent broker (the failure these tests look for) would wait forever.
	t.Cleanup(proxy.restore)
	// The first write also fetches metadata and a producer ID; it is not what these tests measure.
	if r := e.serverEvent(t, e.sk, nil); r.status != http.StatusAccepted {
		t.Fatalf("warm-up: %d %v", r.status, r.body)
	}
	return e, proxy
}

// unavailableWithinBound sends fields and fails the test unless the answer is 503 unavailable with
// Retry-After within the bound.
func (e *edge) unavailableWithinBound(t *testing.T, cfg Config, fields map[string]any) {
	t.Helper()
	start := time.Now()
	r := e.serverEvent(t, e.sk, fields)
	took := time.Since(start)
	if r.status != http.StatusServiceUnavailable || errCode(r) != "unavailable" || r.header.Get("Retry-After") == "" {
		t.Fatalf("while the broker is out: %d %v %v", r.status, r.header, r.body)
	}
	if took > answerBound(cfg) {
		t.Fatalf("answered after %s, over the bound of %s", took, answerBound(cfg))
	}
}

// retryUntilSettled resends fields while the edge says the first attempt's outcome is unknown.
func (e *edge) retryUntilSettled(t *testing.T, fields map[string]any) reply {
	t.Helper()
	var r reply
	testenv.Eventually(t, "an answer other than event_in_progress", func() bool {
		r = e.serverEvent(t, e.sk, fields)
		return errCode(r) != "event_in_progress"
	})
	return r
}

// copiesInKafka counts the server-event records with eventID.
func (e *edge) copiesInKafka(t *testing.T, eventID string) int {
	t.Helper()
	n := 0
	for _, r := range testenv.ReadToEnd(t, e.kc.Brokers, e.producer, e.kc.Topic(schemas.TopicServerEvents)) {
		var ev schemas.ServerEvent
		if err := json.Unmarshal(r.Value, &ev); err == nil && ev.EventID == eventID {
			n++
		}
	}
	return n
}

func paidEvent(id string) map[string]any {
	// A retry resends the same event: the same body, occurredAt included.
	return map[string]any{"eventId": id, "name": "paid", "amountCents": 4900, "currency": "USD",
		"occurredAt": time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)}
}

// TestHungBrokerAnswersInBoundAndLateWriteIsConfirmed: a broker that accepts the produce request
// and never answers gets the client a 503 with Retry-After within the bound. The write's outcome is
// unknown, so the event ID stays reserved (a retry is told event_in_progress, not written again);
// when the broker comes back the write lands, the late acknowledgement confirms the ID, and the
// retry is answered as a duplicate of the one stored event.
func TestHungBrokerAnswersInBoundAndLateWriteIsConfirmed(t *testing.T) {
	cfg := outageConfig()
	e, proxy := newProxiedEdge(t, cfg, 30*time.Second)
	fields := paidEvent("hung-1")

	proxy.stall()
	e.unavailableWithinBound(t, cfg, fields)
	if r := e.serverEvent(t, e.sk, fields); r.status != 503 || errCode(r) != "event_in_progress" {
		t.Fatalf("retry while the first write is unresolved: %d %v", r.status, r.body)
	}
	proxy.resume()

	if r := e.retryUntilSettled(t, fields); r.status != http.StatusOK || r.body["duplicate"] != true {
		t.Fatalf("retry after the broker came back: %d %v", r.status, r.body)
	}
	if n := e.copiesInKafka(t, "hung-1"); n != 1 {
		t.Fatalf("%d copies in Kafka, want the late write only", n)
	}
}

// TestBrokerDownAnswersInBoundAndRetryCountsOnce: with the broker gone (connections cut, new ones
// refused) the answer is 503 within the bound. Whether the request had left the client when the
// connection was cut decides the rest: an unsent write fails and frees the event ID, and the retry
// is accepted as new; a sent one is redelivered by the producer once the broker is back, and the
// retry is answered as its duplicate. Either way the event is stored once.
func TestBrokerDownAnswersInBoundAndRetryCountsOnce(t *testing.T) {
	cfg := outageConfig()
	e, proxy := newProxiedEdge(t, cfg, 30*time.Second)
	fields := paidEvent("down-1")

	proxy.down()
	e.unavailableWithinBound(t, cfg, fields)
	proxy.up(t)

	var r reply
	testenv.Eventually(t, "the retry accepted", func() bool {
		r = e.serverEvent(t, e.sk, fields)
		return r.status != http.StatusServiceUnavailable
	})
	if !(r.status == http.StatusAccepted && r.body["duplicate"] == false) && !(r.status == http.StatusOK && r.body["duplicate"] == true) {
		t.Fatalf("retry after the broker came back: %d %v", r.status, r.body)
	}
	if n := e.copiesInKafka(t, "down-1"); n != 1 {
		t.Fatalf("%d copies in Kafka, want 1", n)
	}
}

// TestRetryAfterTimeoutCountsOnceEndToEnd is the worst case of a retry after a 503: the broker hangs
// longer than the reservation lives, so the client's retry is written again while the first write
// is still in flight, and both land. Kafka then holds the event twice; every consumer that reads
// the topic deduplicates by event ID, so the landed tables count it once.
func TestRetryAfterTimeoutCountsOnceEndToEnd(t *testing.T) {
	cfg := outageConfig()
	e, proxy := newProxiedEdge(t, cfg, 1500*time.Millisecond)
	fields := paidEvent("twice-1")

	proxy.stall()
	e.unavailableWithinBound(t, cfg, fields)
	// The reservation expires with the first write unresolved; the retry then writes again.
	if r := e.retryUntilSettled(t, fields); r.status != 503 || errCode(r) != "unavailable" {
		t.Fatalf("retry once the reservation expired, broker still hung: %d %v", r.status, r.body)
	}
	proxy.resume()

	if r := e.retryUntilSettled(t, fields); r.status != http.StatusOK || r.body["duplicate"] != true {
		t.Fatalf("retry after the broker came back: %d %v", r.status, r.body)
	}
	if n := e.copiesInKafka(t, "twice-1"); n != 2 {
		t.Fatalf("%d copies in Kafka; the test needs both writes to have landed", n)
	}

	pcfg := processors.DefaultConfig()
	pcfg.Backoff, pcfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	svc, err := processors.New(pcfg, processors.Deps{Kafka: e.kc, ClickHouse: e.db.Conn, Producer: e.producer,
		Registry: prometheus.NewRegistry(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("processors: %v", err)
		}
	}()

	adm := kadm.NewClient(e.producer)
	for _, consumer := range []string{"land-server-events", "identity-join"} {
		group := pcfg.GroupPrefix + "." + consumer + e.kc.TopicSuffix
		testenv.Eventually(t, consumer+" committed to the end of the topic", func() bool {
			lag, err := adm.Lag(testenv.Ctx(t), group)
			l := lag[group]
			return err == nil && l.Error() == nil && l.Lag.Total() == 0 && len(l.Lag) > 0
		})
	}
	for _, table := range []string{"server_events", "funnel_events"} {
		var n uint64
		if err := e.db.Conn.QueryRow(testenv.Ctx(t), "SELECT count() FROM "+table+" FINAL WHERE event_id = 'twice-1'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s holds the event %d times, want once", table, n)
		}
	}
}

// producedThen runs then right after each write Kafka acknowledged, before the edge learns of it:
// the moment a client that disconnects hurts the most.
type producedThen struct {
	Producer
	then func()
}

func (p producedThen) Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	p.Producer.Produce(ctx, r, func(r *kgo.Record, err error) {
		p.then()
		promise(r, err)
	})
}

// TestConfirmSurvivesClientDisconnect: the client goes away right after Kafka acknowledged its
// event. The confirm must still happen, so its retry is answered as a duplicate at once instead of
// event_in_progress until the reservation expires.
func TestConfirmSurvivesClientDisconnect(t *testing.T) {
	var disconnect context.CancelFunc
	e := newEdgeWith(t, DefaultConfig(), edgeOptions{producer: func(_ kafkax.Config, direct *kgo.Client) Producer {
		return producedThen{Producer: direct, then: func() { disconnect() }}
	}})
	fields := paidEvent("gone-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disconnect = cancel
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/tracking/server-events", bytes.NewReader(e.serverEventBody(fields)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.sk)
	e.engine.ServeHTTP(httptest.NewRecorder(), req)
	if ctx.Err() == nil {
		t.Fatal("the request never reached Kafka")
	}

	if r := e.serverEvent(t, e.sk, fields); r.status != http.StatusOK || r.body["duplicate"] != true {
		t.Fatalf("retry after the disconnect: %d %v", r.status, r.body)
	}
	if n := e.copiesInKafka(t, "gone-1"); n != 1 {
		t.Fatalf("%d copies in Kafka, want 1", n)
	}
}

func TestProduceTimeoutValidated(t *testing.T) {
	for _, d := range []time.Duration{0, time.Millisecond, 2 * time.Minute} {
		cfg := DefaultConfig()
		cfg.ProduceTimeout = d
		if err := cfg.Validate(); err == nil {
			t.Errorf("produce timeout %s accepted", d)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
