package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/schemas"
)

func TestParseBench(t *testing.T) {
	out := "Running 15s test @ http://127.0.0.1:1/x\n" +
		"BENCH requests=1000 duration_us=2000000 accepted=998 other=2 last_other=503 p50_us=1500 p90_us=2500 " +
		"p99_us=9000 max_us=12000 mean_us=1700 err_connect=0 err_read=1 err_write=0 err_timeout=2\n"
	r, err := parseBench(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 1000 || r.Accepted != 998 || r.Other != 2 || r.LastOther != 503 || r.SocketErrors != 3 {
		t.Fatalf("counts: %+v", r)
	}
	if r.P50 != 1500*time.Microsecond || r.P99 != 9*time.Millisecond || r.Duration != 2*time.Second {
		t.Fatalf("times: %+v", r)
	}
	if got := r.AcceptedPerSec(); got != 499 {
		t.Fatalf("accepted/s = %v", got)
	}
	if _, err := parseBench("no summary\n"); err == nil {
		t.Fatal("output without a BENCH line was accepted")
	}
	if _, err := parseBench("BENCH requests=1\n"); err == nil {
		t.Fatal("a BENCH line without latencies was accepted")
	}
}

// The baseline must accept exactly what wrk.lua sends to the edge.
func TestBareHandlerAcceptsTheBenchBodies(t *testing.T) {
	h := bareHandler()
	server := `{"teamSlug":"bench","publicKey":"tracker_pk_x","eventId":"t-1-1","acquisitionId":"acq-t-1-1","name":"paid",` +
		`"customerRef":"bench-shop.myshopify.com","amountCents":4900,"currency":"USD","occurredAt":"2026-11-21T09:30:00Z"}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/tracking/server-events", strings.NewReader(server)))
	if rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"eventId":"t-1-1"`) {
		t.Fatalf("server event: %d %s", rec.Code, rec.Body)
	}

	ev := map[string]any{"eventId": "t-1-1-1", "name": "page_view", "occurredAt": "2026-11-21T09:30:00Z", "acquisitionId": "acq-1",
		"sessionId": "ses-1", "url": "https://bench.example/pricing", "firstTouch": map[string]any{"utmSource": "ads"}}
	body, _ := json.Marshal(map[string]any{"key": "tracker_pk_x", "batch": []any{ev, ev}})
	req := httptest.NewRequest(http.MethodPost, "/v1/collect", bytes.NewReader(body))
	req.Header.Set("Origin", benchkit.Origin)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"accepted":2`) ||
		rec.Header().Get("Access-Control-Allow-Origin") != benchkit.Origin {
		t.Fatalf("browser batch: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/tracking/server-events", strings.NewReader("{")))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("malformed body: %d", rec.Code)
	}
}

// wrk.lua writes its bodies by hand (Lua cannot use the Go types): every field it names must be one
// the edge's request types declare, so a renamed field fails here rather than as a run of 400s.
func TestWrkBodiesNameTheRequestFields(t *testing.T) {
	known := map[string]bool{}
	for _, v := range []any{schemas.ServerEventRequest{}, schemas.CollectRequest{}, schemas.BrowserEventRequest{}, schemas.FirstTouch{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			known[name] = true
		}
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([A-Za-z]+)":`).FindAllSubmatch(wrkScript, -1) {
		named[string(m[1])] = true
		if !known[string(m[1])] {
			t.Errorf("wrk.lua sends %q, which no request type of the edge declares", m[1])
		}
	}
	for _, f := range []string{"teamSlug", "publicKey", "eventId", "amountCents", "key", "batch", "firstTouch", "gclid"} {
		if !named[f] {
			t.Errorf("wrk.lua no longer sends %q: update this test with the script", f)
		}
	}
}

// TestSumSamples: a metric's samples are summed over its series, unlabelled or labelled, and only
// over those that match; a longer name with the same prefix is not the metric.
func TestSumSamples(t *testing.T) {
	text := "# HELP revtrack_processor_records_consumed_total Records polled from Kafka.\n" +
		`revtrack_processor_records_consumed_total{consumer="server-events"} 120` + "\n" +
		`revtrack_processor_records_consumed_total{consumer="browser-events"} 3e+06` + "\n" +
		"revtrack_processor_records_consumed_totalx 7\n" +
		"revtrack_ingest_produce_seconds_count 42\n" +
		`revtrack_kafka_producer_produce_batches_total{node_id="1",topic="a.s1"} 5` + "\n" +
		`revtrack_kafka_producer_produce_batches_total{node_id="1",topic="b.s1"} 9` + "\n"
	for _, c := range []struct {
		name  string
		match []string
		want  float64
	}{
		{"revtrack_processor_records_consumed_total", nil, 3_000_120},
		{"revtrack_ingest_produce_seconds_count", nil, 42},
		{"revtrack_kafka_producer_produce_batches_total", []string{`topic="b.s1"`}, 9},
		{"revtrack_ingest_admission_batch_size_count", nil, 0},
	} {
		if got := sumSamples(text, c.name, c.match...); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.name, c.match, got, c.want)
		}
	}
}
