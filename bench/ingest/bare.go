package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/internal/httpserver"
	"github.com/revtrack/revtrack/schemas"
)

// The baseline: a plain net/http server that reads the same bodies and decodes them into the edge's
// own request types (schemas/requests_tracking.go), then answers 202 with the edge's response types.
// No auth, validation, Redis or Kafka: the ratio edge/bare is what the edge's work costs on top of
// HTTP and JSON.

func bareHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/tracking/server-events", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<10))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		var req schemas.ServerEventRequest
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&req); err != nil || dec.More() {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusAccepted, ingest.ServerEventResponse{Accepted: true, EventID: req.EventID})
	})
	mux.HandleFunc("POST /v1/collect", func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Add("Vary", "Origin")
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		var req schemas.CollectRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		n := 0
		for _, raw := range req.Batch {
			var ev schemas.BrowserEventRequest
			if json.NewDecoder(bytes.NewReader(raw)).Decode(&ev) == nil {
				n++
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusAccepted, ingest.CollectResponse{Accepted: n, Rejected: []ingest.RejectedEvent{}})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// startBare serves the baseline on a free loopback port until ctx ends.
func startBare(ctx context.Context) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	// The edge's own server settings (timeouts, body limit), so the baseline differs by the handler only.
	srv := httpserver.NewServer(bareHandler(), httpserver.DefaultConfig())
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return "http://" + ln.Addr().String(), func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}
