package cluster

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

type chConn = driver.Conn

// ingestThroughput sends n server events through the edge from 16 senders at once and returns the
// rate from the first send until all are acknowledged and in server_events, and that duration.
func ingestThroughput(t *testing.T, in *instance, n int) (float64, time.Duration) {
	t.Helper()
	conn := in.conn(t)
	before := countWhere(t, conn, "server_events", in.sourceID)
	c := newEdgeClient(in)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	start := time.Now()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				ev := map[string]any{"eventId": fmt.Sprintf("cost-%s-%d", in.id, i), "name": "identified",
					"customerRef": fmt.Sprintf("cost-%d.example", i%100), "occurredAt": time.Now().UTC().Format(time.RFC3339Nano)}
				if code, _ := c.retry(ctx, "/api/tracking/server-events", c.serverBody(ev), c.serverHeader(), 6); code/100 != 2 {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if failed > 0 {
		t.Fatalf("%s: %d of %d server events not acknowledged", in.shape, failed, n)
	}
	for countWhere(t, conn, "server_events", in.sourceID) < before+uint64(n) {
		if ctx.Err() != nil {
			t.Fatalf("%s: the %d events did not land within 3 minutes", in.shape, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d := time.Since(start)
	return float64(n) / d.Seconds(), d
}

// summaryLatency times k computed summaries (Cache-Control: no-cache) and returns p50 and p90 of
// the 200s, and how many were not 200.
func summaryLatency(t *testing.T, in *instance, k int) (time.Duration, time.Duration, int) {
	t.Helper()
	var ds []time.Duration
	failed := 0
	for range k {
		req, _ := http.NewRequest(http.MethodGet, in.base+"/api/v1/summary?customerScope=all", nil)
		req.Header.Set("Authorization", "Bearer "+in.apiKey)
		req.Header.Set("Cache-Control", "no-cache")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: summary: %v", in.shape, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			failed++
			continue
		}
		ds = append(ds, time.Since(start))
	}
	return percentile(ds, 0.5), percentile(ds, 0.9), failed
}
