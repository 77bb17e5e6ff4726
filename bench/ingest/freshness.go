package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/schemas"
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

	n := max(1, int(d.Seconds()*float64(rate)))
	res.Sent = n
	ids := make([]string, n)
	acked := make([]time.Time, n)
	var failMu sync.Mutex
	send := func(i int) bool {
		ids[i] = fmt.Sprintf("%s-%d", tag, i)
		body, _ := json.Marshal(schemas.ServerEventRequest{TeamSlug: benchkit.TeamSlug, PublicKey: s.Source.PublicKey, EventID: ids[i],
			AcquisitionID: "acq-" + ids[i], Name: "install", OccurredAt: occurred})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.Revtrack.BaseURL+"/api/tracking/server-events", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.Private)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		at := time.Now()
		fail := ""
		if err != nil {
			fail = "transport error"
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				fail = "HTTP " + strconv.Itoa(resp.StatusCode)
			}
		}
		if fail != "" {
			failMu.Lock()
			res.Failed[fail]++
			failMu.Unlock()
			return false
		}
		acked[i] = at
		return true
	}
	seen := func(ctx context.Context, pending []int) ([]int, error) {
		byID := make(map[string]int, len(pending))
		for _, i := range pending {
			byID[ids[i]] = i
		}
		visible, err := s.visible(ctx, slices.Collect(maps.Keys(byID)))
		if err != nil {
			return nil, err
		}
		at := time.Now()
		done := make([]int, 0, len(visible))
		for _, id := range visible {
			i := byID[id]
			res.Lat = append(res.Lat, at.Sub(acked[i]))
			done = append(done, i)
		}
		return done, nil
	}
	if err := (benchkit.Paced{N: n, Rate: rate, Poll: poll, Wait: wait}).Run(ctx, send, seen); err != nil {
		return res, err
	}
	for _, at := range acked {
		if !at.IsZero() {
			res.Acked++
		}
	}
	res.Visible = len(res.Lat)
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
		rows, err := s.Conn.Query(ctx, "SELECT event_id FROM server_events WHERE source_id = ? AND event_id IN ?",
			s.Source.ID, clickhouse.GroupSet{Value: set})
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
