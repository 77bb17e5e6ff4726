package platformsync

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/internal/egress"
)

// Requests go unpaced until the first 429, then at most RequestsPerSecond; every answer is counted.
func TestTransportPacesOnceThrottled(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 4 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	hc := httpClient(egress.Policy{AllowPrivateNetworks: true}, 10, m)
	get := func() {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	start := time.Now()
	for range 4 {
		get()
	}
	if d := time.Since(start); d > 250*time.Millisecond { // paced at 10/s, four would take at least 300 ms; the margin is for a loaded CI machine
		t.Errorf("unthrottled requests were paced: %v", d)
	}
	start = time.Now()
	for range 5 {
		get()
	}
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Errorf("5 requests after a 429 at 10/s took %v", d)
	}
	counts := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, x := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range x.GetLabel() {
				name += "," + l.GetValue()
			}
			counts[name] = x.GetCounter().GetValue()
		}
	}
	if counts["revtrack_platform_sync_throttled_total"] != 1 || counts["revtrack_platform_sync_api_requests_total,200"] != 8 ||
		counts["revtrack_platform_sync_api_requests_total,429"] != 1 {
		t.Errorf("counted %v", counts)
	}
}
