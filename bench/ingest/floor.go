package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/internal/httpserver"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/schemas"
)

// The floor (issue 17): the least a correct edge must do per request, and nothing more. A plain
// net/http handler decodes the JSON, runs ONE Redis script that counts the rate window and reserves
// the event ID, writes the record with ONE franz-go ProduceSync through revtrack's own producer
// options (kafkax.NewProducer: acks=all, idempotent, lz4, the configured linger), and answers 202.
// No authentication, no validation, no metrics, no confirm: the edge does all of those on top, so
// an edge at 1.0× the floor pays for them with what it saves elsewhere.
//
// It writes to the sandbox's own topics, the ones the in-process processors consume, so the
// consumers' share of the bench process's CPU is the same per event for the floor and the edge.

// floorScript is the floor's one Redis round trip: the fixed-window counter and the reservation.
var floorScript = redis.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("PEXPIRE", KEYS[1], 60000) end
if redis.call("SET", KEYS[2], "p", "NX", "PX", 30000) then return 1 end
return 0`)

// batchCounter counts produced batches and records (franz-go's OnProduceBatchWritten hook).
type batchCounter struct{ batches, records atomic.Int64 }

func (b *batchCounter) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	b.batches.Add(1)
	b.records.Add(int64(m.NumRecords))
}

// floor is the running floor server.
type floor struct {
	url      string
	counts   *batchCounter
	producer *kgo.Client
	srv      *http.Server
}

func (f *floor) stop() {
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = f.srv.Shutdown(sctx)
	f.producer.Close()
}

// startFloor serves the floor on a free loopback port with the sandbox's Redis and Kafka.
func startFloor(ctx context.Context, st *stack) (*floor, error) {
	kc := kafkax.DefaultConfig()
	kc.Brokers = st.Brokers
	counts := &batchCounter{}
	prod, err := kafkax.NewProducer(kc, "floor", nil, kgo.WithHooks(counts))
	if err != nil {
		return nil, err
	}
	srvTopic, colTopic := schemas.TopicServerEvents+st.Suffix, schemas.TopicBrowserEvents+st.Suffix
	prefix, sourceID := st.Redis.KeyPrefix+"floor:", st.Source.ID
	var seq atomic.Int64
	admit := func(r *http.Request, limitKey, id string) bool {
		window := time.Now().Unix() / 60
		ok, err := floorScript.Run(r.Context(), st.RDB, []string{prefix + "rl:" + limitKey + ":" + strconv.FormatInt(window, 10),
			prefix + "d:" + id}).Int()
		return err == nil && ok == 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/tracking/server-events", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<10))
		var req schemas.ServerEventRequest
		if err != nil || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if !admit(r, "srv:"+sourceID, sourceID+":"+req.EventID) {
			http.Error(w, "refused", http.StatusConflict)
			return
		}
		at, _ := time.Parse(time.RFC3339Nano, req.OccurredAt)
		ev := schemas.ServerEvent{EventID: req.EventID, AcquisitionID: req.AcquisitionID, Name: req.Name,
			CustomerRef: req.CustomerRef, Currency: req.Currency, OccurredAt: at, ReceivedAt: time.Now().UTC(),
			SourceID: sourceID, WorkspaceID: st.Source.WorkspaceID, AppID: st.Source.AppID}
		if n, err := strconv.ParseInt(string(req.AmountCents), 10, 64); err == nil {
			ev.AmountCents = &n
		}
		value, _ := json.Marshal(ev)
		rec := &kgo.Record{Topic: srvTopic, Key: []byte(sourceID + ":" + req.AcquisitionID), Value: value}
		if err := prod.ProduceSync(context.WithoutCancel(r.Context()), rec).FirstErr(); err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusAccepted, ingest.ServerEventResponse{Accepted: true, EventID: req.EventID})
	})
	mux.HandleFunc("POST /v1/collect", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		var req schemas.CollectRequest
		if err != nil || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		// A batch has no one event ID to reserve; the script still runs once (the rate window).
		if !admit(r, "web:"+sourceID, "batch:"+strconv.FormatInt(seq.Add(1), 10)) {
			http.Error(w, "refused", http.StatusConflict)
			return
		}
		now := time.Now().UTC()
		recs := make([]*kgo.Record, 0, len(req.Batch))
		for _, raw := range req.Batch {
			var in schemas.BrowserEventRequest
			if json.NewDecoder(bytes.NewReader(raw)).Decode(&in) != nil {
				continue
			}
			at, _ := time.Parse(time.RFC3339Nano, in.OccurredAt)
			value, _ := json.Marshal(schemas.BrowserEvent{EventID: in.EventID, AcquisitionID: in.AcquisitionID,
				SessionID: in.SessionID, Name: in.Name, OccurredAt: at, ReceivedAt: now, URL: in.URL, Path: in.Path,
				Title: in.Title, Referrer: in.Referrer, FirstTouch: in.FirstTouch, SourceID: sourceID,
				WorkspaceID: st.Source.WorkspaceID, AppID: st.Source.AppID, UserAgent: r.UserAgent()})
			recs = append(recs, &kgo.Record{Topic: colTopic, Key: []byte(sourceID + ":" + in.AcquisitionID), Value: value})
		}
		if err := prod.ProduceSync(context.WithoutCancel(r.Context()), recs...).FirstErr(); err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusAccepted, ingest.CollectResponse{Accepted: len(recs), Rejected: []ingest.RejectedEvent{}})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		prod.Close()
		return nil, err
	}
	srv := httpserver.NewServer(mux, httpserver.DefaultConfig())
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("floor: %v", err))
		}
	}()
	return &floor{url: "http://" + ln.Addr().String(), counts: counts, producer: prod, srv: srv}, nil
}
