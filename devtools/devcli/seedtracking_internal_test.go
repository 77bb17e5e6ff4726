package devcli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/revtrack/revtrack/schemas"
)

// TestTrackingSenderWaitsOutRateLimit: the seed answers the edge's 429 and 503 as docs/TRACKING.md
// says a client should, by sending the same event again after Retry-After, and counts an event the
// edge already had as a duplicate.
func TestTrackingSenderWaitsOutRateLimit(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.Header.Get("Authorization") != "Bearer tracker_sk_x":
			w.WriteHeader(http.StatusUnauthorized)
		case n == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case n == 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 3:
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	s := &trackingSender{base: srv.URL, privateKey: "tracker_sk_x", publicKey: "tracker_pk_x", client: srv.Client()}
	ev := schemas.ServerEventRequest{EventID: "e1", Name: "install"}
	if dup, err := s.serverEvent(context.Background(), ev); err != nil || dup {
		t.Fatalf("first event: duplicate %v, %v", dup, err)
	}
	if dup, err := s.serverEvent(context.Background(), ev); err != nil || !dup {
		t.Fatalf("the same event again: duplicate %v, %v", dup, err)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d requests, want 4 (429, 503, accepted, duplicate)", n)
	}
}
