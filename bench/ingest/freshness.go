package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// freshResult is end-to-end freshness: for each server event, the time from its 2xx at the client
// to the first poll of ClickHouse that returned its row.
type freshResult struct {
	Rate     int
	Duration time.Duration
	Poll     time.Duration
	Sent     int
	Acked    int
	Visible  int
	Failed   map[string]int // non-2xx statuses and transport errors, by kind
	Lat      []time.Duration
}

func (f freshResult) pct(p float64) time.Duration { return benchkit.Percentile(f.Lat, p) }

// freshness sends rate server events per second for d through the edge, each on its own goroutine
// so a slow answer does not delay the schedule, and polls ClickHouse every poll interval for the
// acknowledged events that are not visible yet. An event not visible within wait of the last send
// counts as lost.
func (s *stack) freshness(ctx context.Context, tag string, rate int, d, poll, wait time.Duration) (freshResult, error) {
	res := freshResult{Rate: rate, Duration: d, Poll: poll, Failed: map[string]int{}}
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	occurred := time.Now().UTC().Format(time.RFC3339Nano)

	var (
		mu      sync.Mutex
		acked   = map[string]time.Time{}
		pending []string
		wg      sync.WaitGroup
	)
	send := func(id string) {
		defer wg.Done()
		body, _ := json.Marshal(map[string]any{"teamSlug": benchSlug, "publicKey": s.src.PublicKey, "eventId": id,
			"acquisitionId": "acq-" + id, "name": "install", "occurredAt": occurred})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.revtrack.BaseURL+"/api/tracking/server-events", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.private)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		at := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.Failed["transport error"]++
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			res.Failed["HTTP "+strconv.Itoa(resp.StatusCode)]++
			return
		}
		acked[id] = at
		pending = append(pending, id)
	}

	sendDone := make(chan struct{})
	n := max(1, int(d.Seconds()*float64(rate)))
	res.Sent = n
	go func() {
		defer close(sendDone)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := range n {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			wg.Add(1)
			go send(fmt.Sprintf("%s-%d", tag, i))
		}
		wg.Wait()
	}()

	var deadline time.Time
	sending := true
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-sendDone:
			sending, sendDone = false, nil
			deadline = time.Now().Add(wait)
		case <-time.After(poll):
		}
		mu.Lock()
		ids := slices.Clone(pending)
		mu.Unlock()
		seen, err := s.visible(ctx, ids)
		if err != nil {
			return res, err
		}
		at := time.Now()
		mu.Lock()
		for _, id := range seen {
			res.Lat = append(res.Lat, at.Sub(acked[id]))
		}
		pending = slices.DeleteFunc(pending, func(id string) bool { return slices.Contains(seen, id) })
		left := len(pending)
		mu.Unlock()
		if !sending && (left == 0 || time.Now().After(deadline)) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	res.Acked, res.Visible = len(acked), len(res.Lat)
	slices.Sort(res.Lat)
	return res, nil
}

// visible returns which of ids the bench source's server_events holds.
func (s *stack) visible(ctx context.Context, ids []string) ([]string, error) {
	var out []string
	for chunk := range slices.Chunk(ids, 1000) {
		set := make([]any, len(chunk))
		for i, id := range chunk {
			set[i] = id
		}
		rows, err := s.conn.Query(ctx, "SELECT event_id FROM server_events WHERE source_id = ? AND event_id IN ?",
			s.src.ID, clickhouse.GroupSet{Value: set})
		if err != nil {
			return nil, fmt.Errorf("freshness poll: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out))), nil
}
