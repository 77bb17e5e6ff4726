package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/schemas"
)

const (
	// collectBatch events per /v1/collect request: under the edge's 50 events and 64 KB
	// (docs/TRACKING.md, section 3); the demo's events are under 1 KB each.
	collectBatch = 40
	// serverSenders is how many server events are in flight at once. The edge takes 600 a minute
	// per private key; the demo sends a few hundred, and waits out a 429 when run again within the
	// minute.
	serverSenders = 4
	// maxAttempts bounds the retries of one request (429, 503 and transport errors).
	maxAttempts = 5
)

// seedTrackingCommand sends the demo's tracked visits and verified events through the running
// edge, as the demo page's visitors and the app's server would have (trackingplan.go).
func (a *app) seedTrackingCommand() *cobra.Command {
	var publicKey, privateKey, team string
	cmd := &cobra.Command{Use: "seed-tracking",
		Short: "Send the demo's tracked first touches and verified install, trial and paid events to a running revtrack (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if publicKey == "" || privateKey == "" {
				return errors.New("--public-key and --private-key are required (seed-demo prints them)")
			}
			// The same data the partner API fake serves today (fakes.go), so the events name its shops
			// at the times it reports.
			d := partnerfake.Generate(partnerfake.DemoConfig(time.Now()))
			plan := planTracking(d, demoApps[0].PlatformAppID, team, publicKey, demoPageOrigin)
			ctx, cancel := context.WithTimeout(c.Context(), 10*time.Minute)
			defer cancel()
			s := &trackingSender{base: strings.TrimRight(a.cfg.HTTP.BaseURL, "/"), privateKey: privateKey, publicKey: publicKey,
				client: &http.Client{Timeout: 30 * time.Second}}
			res, err := s.send(ctx, plan)
			if err != nil {
				return err
			}
			a.log.Info("demo tracking seeded", "plan", plan.String(), "channels", plan.channelCounts())
			fmt.Fprintf(a.out, "customers=%d tracked_shops=%d browser_events=%d server_events=%d new=%d duplicates=%d\n",
				plan.Customers, len(plan.Shops), res.browser, res.new+res.duplicates, res.new, res.duplicates)
			return nil
		}}
	cmd.Flags().StringVar(&publicKey, "public-key", "", "the demo source's public key")
	cmd.Flags().StringVar(&privateKey, "private-key", "", "the demo source's private key")
	cmd.Flags().StringVar(&team, "team", demoSlug, "the demo workspace's slug")
	return cmd
}

// trackingSender posts a plan to the edge (base URL of `revtrack all` or `revtrack ingest`).
type trackingSender struct {
	base, privateKey, publicKey string
	client                      *http.Client
}

type sendResult struct {
	browser, new, duplicates int
}

// send posts every page view in batches, then every server event. Browser events go first, as they
// happen first; attribution joins them at read time, so the order does not decide the result.
func (s *trackingSender) send(ctx context.Context, plan trackingPlan) (sendResult, error) {
	var res sendResult
	var browser []schemas.BrowserEventRequest
	var server []schemas.ServerEventRequest
	for _, sh := range plan.Shops {
		browser = append(browser, sh.Browser...)
		server = append(server, sh.Server...)
	}
	for i := 0; i < len(browser); i += collectBatch {
		n, err := s.collect(ctx, browser[i:min(i+collectBatch, len(browser))])
		if err != nil {
			return res, err
		}
		res.browser += n
	}
	// Events of a shop keep their order (install before trial before paid) only as a courtesy: each
	// carries its own time.
	sort.SliceStable(server, func(i, j int) bool { return server[i].OccurredAt < server[j].OccurredAt })
	var mu sync.Mutex
	var firstErr error
	work := make(chan schemas.ServerEventRequest)
	var wg sync.WaitGroup
	for range serverSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range work {
				dup, err := s.serverEvent(ctx, ev)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
				case err == nil && dup:
					res.duplicates++
				case err == nil:
					res.new++
				}
				mu.Unlock()
			}
		}()
	}
	for _, ev := range server {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		work <- ev
	}
	close(work)
	wg.Wait()
	return res, firstErr
}

// collect posts one batch as tracker.js does: text/plain, from the demo page's origin. The answer
// must accept every event: the plan's events are all valid, so a rejected one is a bug to report.
func (s *trackingSender) collect(ctx context.Context, batch []schemas.BrowserEventRequest) (int, error) {
	raw := make([]json.RawMessage, len(batch))
	for i, ev := range batch {
		raw[i], _ = json.Marshal(ev)
	}
	body, _ := json.Marshal(schemas.CollectRequest{Key: s.publicKey, Batch: raw})
	status, answer, err := s.post(ctx, "/v1/collect", body, func(r *http.Request) {
		r.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		r.Header.Set("Origin", demoPageOrigin)
	})
	if err != nil {
		return 0, err
	}
	var out struct {
		Accepted int `json:"accepted"`
		Rejected []struct {
			Index   int    `json:"index"`
			Message string `json:"message"`
		} `json:"rejected"`
	}
	if status != http.StatusAccepted || json.Unmarshal(answer, &out) != nil {
		return 0, fmt.Errorf("/v1/collect answered %d: %s", status, answer)
	}
	if len(out.Rejected) > 0 {
		r := out.Rejected[0]
		return 0, fmt.Errorf("/v1/collect rejected %d events, the first (%s): %s", len(out.Rejected), batch[r.Index].EventID, r.Message)
	}
	return out.Accepted, nil
}

// serverEvent posts one verified event with the private key and reports whether the edge already
// had it.
func (s *trackingSender) serverEvent(ctx context.Context, ev schemas.ServerEventRequest) (duplicate bool, err error) {
	body, _ := json.Marshal(ev)
	status, answer, err := s.post(ctx, "/api/tracking/server-events", body, func(r *http.Request) {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+s.privateKey)
	})
	if err != nil {
		return false, err
	}
	switch status {
	case http.StatusAccepted:
		return false, nil
	case http.StatusOK:
		return true, nil
	}
	return false, fmt.Errorf("server event %s %s of %s: %d %s", ev.Name, ev.EventID, ev.CustomerRef, status, answer)
}

// post sends body and retries what the edge says to retry (docs/TRACKING.md): 429 after
// Retry-After, 503 (unavailable, event_in_progress) and transport errors with a short backoff. A
// retry sends the same body, so it can never count twice.
func (s *trackingSender) post(ctx context.Context, path string, body []byte, header func(*http.Request)) (int, []byte, error) {
	var last error
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		header(req)
		wait := time.Duration(attempt) * time.Second
		resp, err := s.client.Do(req)
		if err == nil {
			answer, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			switch {
			case rerr != nil:
				err = rerr
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
				err = fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, bytes.TrimSpace(answer))
				if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs > 0 {
					wait = time.Duration(secs) * time.Second
				}
			default:
				return resp.StatusCode, answer, nil
			}
		}
		last = err
		if attempt == maxAttempts {
			return 0, nil, last
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(wait):
		}
	}
}
