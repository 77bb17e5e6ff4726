package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/schemas"
)

// The times of issue 12: each was acknowledged by the edge and then dead-lettered, or stored wrong,
// or deleted at the next retention pass.
var refusedTimes = []string{
	"1900-01-01T00:00:00Z",      // stored as 2036-02-07 06:28:16
	"1969-12-31T23:59:59Z",      // stored as 2106-02-07
	"0001-01-01T00:00:00Z",      // decodes as the zero time: "occurredAt is required" downstream
	"2026-05-01T00:00:00Z",      // inside what storage holds, but past the 180-day retention window
	"2026-06-02T11:59:59.999Z",  // 1 ms before the first accepted time (now - 172 days)
	"2026-11-21T13:00:00.001Z",  // 1 ms after the last (now + 1 hour)
	"2106-02-07T06:28:16Z",      // after what a DateTime holds
	"9999-12-31T23:59:59+14:00", // far beyond it
}

// acceptedTimes are the ends of the range for now (2026-11-21T12:00:00Z) and a one-hour skew.
var acceptedTimes = []string{"2026-06-02T12:00:00Z", "2026-06-02T14:00:00+02:00", "2026-11-21T12:00:00Z", "2026-11-21T13:00:00Z"}

func TestServerEventTimesOutsideTheRangeAreRefusedNamingIt(t *testing.T) {
	for _, at := range refusedTimes {
		_, _, err := decodeServerEvent(body(map[string]any{"occurredAt": at}), now, time.Hour)
		ae := toAPIError(err)
		if err == nil || ae.Status() != 400 || ae.Code != "invalid_parameter" {
			t.Errorf("%s: %v", at, err)
			continue
		}
		for _, want := range []string{"2026-06-02T12:00:00Z to 2026-11-21T13:00:00Z", "172 days", "180 days", "1 hour"} {
			if !strings.Contains(ae.Message, want) {
				t.Errorf("%s: message %q does not say %q", at, ae.Message, want)
			}
		}
	}
	for _, at := range acceptedTimes {
		if _, _, err := decodeServerEvent(body(map[string]any{"occurredAt": at}), now, time.Hour); err != nil {
			t.Errorf("%s: %v", at, err)
		}
	}
}

func TestBrowserEventTimesOutsideTheRangeAreRefusedNamingIt(t *testing.T) {
	for _, at := range refusedTimes {
		raw := fmt.Sprintf(`{"eventId":"e1","name":"page_view","occurredAt":%q,"acquisitionId":"a1"}`, at)
		ev, err := decodeBrowserEvent(json.RawMessage(raw), now, time.Hour, nil)
		switch {
		case at > "2026-11-21": // a browser clock ahead: stamped with the receipt time, not refused
			if err != nil || !ev.OccurredAt.Equal(now) {
				t.Errorf("%s: %v %v", at, ev.OccurredAt, err)
			}
		case err == nil || !strings.Contains(err.Error(), "2026-06-02T12:00:00Z to 2026-11-21T13:00:00Z"):
			t.Errorf("%s: %v", at, err)
		}
	}
	for _, at := range acceptedTimes {
		raw := fmt.Sprintf(`{"eventId":"e1","name":"page_view","occurredAt":%q,"acquisitionId":"a1"}`, at)
		if ev, err := decodeBrowserEvent(json.RawMessage(raw), now, time.Hour, nil); err != nil || ev.OccurredAt.Equal(now) != (at == "2026-11-21T12:00:00Z") {
			t.Errorf("%s: %v %v", at, ev.OccurredAt, err)
		}
	}
}

// consumerChecks are the decode-and-validate steps of every consumer of the process component,
// taken from the service's own wiring. Its Kafka clients point at a closed port: nothing here
// consumes, and the clients are closed before the checks run.
var consumerChecks = sync.OnceValues(func() (map[string][]processors.RecordCheck, error) {
	kc := kafkax.DefaultConfig()
	kc.Brokers = []string{"127.0.0.1:1"}
	svc, err := processors.New(processors.DefaultConfig(), processors.Deps{Kafka: kc, Registry: prometheus.NewRegistry(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	svc.Close()
	byTopic := map[string][]processors.RecordCheck{}
	for _, c := range svc.RecordChecks() {
		byTopic[c.Topic] = append(byTopic[c.Topic], c)
	}
	return byTopic, nil
})

// mustBeConsumed runs a record the edge would produce through every consumer of its topic.
func mustBeConsumed(t *testing.T, topic string, msg any) {
	t.Helper()
	checks, err := consumerChecks()
	if err != nil {
		t.Fatal(err)
	}
	if len(checks[topic]) == 0 {
		t.Fatalf("no consumer of %s", topic)
	}
	value, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("the edge cannot encode what it accepted: %v (%+v)", err, msg)
	}
	for _, c := range checks[topic] {
		if err := c.Check(&kgo.Record{Topic: topic, Value: value}); err != nil {
			t.Fatalf("the edge accepted what %s dead-letters: %v\n%s", c.Consumer, err, value)
		}
	}
}

func TestEveryEventConsumerIsChecked(t *testing.T) {
	checks, err := consumerChecks()
	if err != nil {
		t.Fatal(err)
	}
	names := func(topic string) (out []string) {
		for _, c := range checks[topic] {
			out = append(out, c.Consumer)
		}
		return out
	}
	if got := fmt.Sprint(names(schemas.TopicServerEvents)); got != "[land-server-events identity-join upload-match]" {
		t.Errorf("server-event consumers %s", got)
	}
	if got := fmt.Sprint(names(schemas.TopicBrowserEvents)); got != "[sessionize]" {
		t.Errorf("browser-event consumers %s", got)
	}
}

// edgeClock turns fuzzed integers into the edge's clock and its --ingest-max-future-skew: any
// instant time.Unix can name, and any non-negative skew (the configuration refuses a negative one).
func edgeClock(nowNanos int64, skewSeconds uint32) (time.Time, time.Duration) {
	return time.Unix(0, nowNanos).UTC(), time.Duration(skewSeconds) * time.Second
}

// seedTimes are the fuzzers' seed corpus: the times and the ends of the range, under the
// tests' clock and under clocks near the ends of what storage holds.
func seedTimes(f *testing.F, add func(occurredAt string, nowNanos int64, skewSeconds uint32)) {
	clocks := []int64{now.UnixNano(), schemas.EarliestStorableTime.Add(schemas.MaxEventAge).UnixNano() + 1,
		schemas.LatestStorableTime.Add(-time.Minute).UnixNano(), -1, schemas.LatestStorableTime.UnixNano() + 1}
	for _, c := range clocks {
		for _, at := range append(append([]string{}, refusedTimes...), acceptedTimes...) {
			add(at, c, 3600)
		}
		add("1970-01-01T00:00:00Z", c, 0)
		add("2106-02-07T06:28:15Z", c, 1<<32-1)
		add("2106-02-07T06:28:15.5Z", c, 1<<32-1)
	}
}

// FuzzEdgeAcceptedServerEventsPassEveryConsumer: whatever body and clock, a server event the edge
// accepts, encoded as the edge produces it, passes the decode and validation of every consumer of
// the server-events topic. The seed corpus runs with the other tests; fuzz it with
// go test ./ingest -run '^$' -fuzz FuzzEdgeAcceptedServerEventsPassEveryConsumer -fuzztime 60s
func FuzzEdgeAcceptedServerEventsPassEveryConsumer(f *testing.F) {
	seedTimes(f, func(at string, nowNanos int64, skew uint32) {
		f.Add(body(map[string]any{"occurredAt": at}), nowNanos, skew)
		f.Add(body(map[string]any{"occurredAt": at, "name": "paid", "amountCents": 1999, "currency": "usd"}), nowNanos, skew)
	})
	f.Fuzz(func(t *testing.T, b []byte, nowNanos int64, skewSeconds uint32) {
		at, skew := edgeClock(nowNanos, skewSeconds)
		_, ev, err := decodeServerEvent(b, at, skew)
		if err != nil {
			return
		}
		// What serverEvents adds from the authenticated source before producing.
		ev.SourceID, ev.WorkspaceID, ev.AppID = "src", "ws", "app"
		mustBeConsumed(t, schemas.TopicServerEvents, ev)
	})
}

// FuzzEdgeAcceptedBrowserEventsPassEveryConsumer is the same for one event of a browser batch.
func FuzzEdgeAcceptedBrowserEventsPassEveryConsumer(f *testing.F) {
	seedTimes(f, func(at string, nowNanos int64, skew uint32) {
		f.Add([]byte(fmt.Sprintf(`{"eventId":"e1","name":"page_view","occurredAt":%q,"acquisitionId":"a1"}`, at)), nowNanos, skew)
	})
	f.Fuzz(func(t *testing.T, b []byte, nowNanos int64, skewSeconds uint32) {
		at, skew := edgeClock(nowNanos, skewSeconds)
		ev, err := decodeBrowserEvent(b, at, skew, nil)
		if err != nil {
			return
		}
		// What collect adds from the authenticated source and the request before producing.
		ev.SourceID, ev.WorkspaceID, ev.AppID, ev.UserAgent = "src", "ws", "app", "test-agent"
		mustBeConsumed(t, schemas.TopicBrowserEvents, ev)
	})
}
