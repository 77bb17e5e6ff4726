package ingest

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

type countingFlusher struct{ n atomic.Int32 }

func (f *countingFlusher) Flush(ctx context.Context) error {
	f.n.Add(1)
	return ctx.Err()
}

func TestHandoffFlushesWhenTheLastRequestLeaves(t *testing.T) {
	f := &countingFlusher{}
	h := handoff{f: f, flushes: prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})}
	a, b := h.arrive(), h.arrive()
	a()
	a() // a request's second leave (its deferred one) takes nothing off
	if n := f.n.Load(); n != 0 {
		t.Fatalf("flushed %d times with a request still on its way", n)
	}
	b()
	b()
	if n := f.n.Load(); n != 1 {
		t.Fatalf("flushed %d times after the last request left, want 1", n)
	}
	if off := (&handoff{}).arrive(); off != nil {
		off() // no flusher (FlushWhenIdle off, or a producer without Flush): nothing to call
	}
}

// A producer whose linger outlasts the produce timeout: a lone request's record must still be acknowledged,
// since no other request is on its way to share its batch; with FlushWhenIdle off it waits out the
// linger and the edge answers 503, which shows the test can tell the two apart.
func TestLoneRequestsDoNotWaitOutTheLinger(t *testing.T) {
	for _, flush := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.ProduceTimeout = 2 * time.Second
		cfg.FlushWhenIdle = flush
		e := newEdgeWith(t, cfg, edgeOptions{producer: func(kc kafkax.Config, _ *kgo.Client) Producer {
			kc.Linger = 30 * time.Second
			cl, err := kafkax.NewProducer(kc, "lingering", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cl.Close)
			// Metadata and a producer ID first: a record produced before its partitions are known is
			// not in a partition's buffer yet when the edge flushes. Nothing lingers during a Flush.
			for _, topic := range []string{schemas.TopicServerEvents, schemas.TopicBrowserEvents} {
				var werr error
				done := make(chan struct{})
				cl.Produce(testenv.Ctx(t), &kgo.Record{Topic: kc.Topic(topic), Value: []byte("{}")}, func(_ *kgo.Record, err error) {
					werr = err
					close(done)
				})
				if err := cl.Flush(testenv.Ctx(t)); err != nil {
					t.Fatal(err)
				}
				if <-done; werr != nil {
					t.Fatal(werr)
				}
			}
			return cl
		}})
		want := http.StatusAccepted
		if !flush {
			want = http.StatusServiceUnavailable
		}
		if r := e.serverEvent(t, e.sk, map[string]any{"eventId": "lone-" + time.Now().Format("150405.000000")}); r.status != want {
			t.Fatalf("FlushWhenIdle %v: server event %d %v, want %d", flush, r.status, r.body, want)
		}
		if r := e.do(t, "POST", "/v1/collect", map[string]string{"Origin": "https://app.example"}, collectBody(e.src.PublicKey, pageView("lone"))); r.status != want {
			t.Fatalf("FlushWhenIdle %v: collect %d %v, want %d", flush, r.status, r.body, want)
		}
	}
}
