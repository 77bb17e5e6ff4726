package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
)

// traffic is what a publisher's tracker and server send for the comparison: the same event IDs,
// times and payloads to every instance.
type traffic struct {
	batches [][]map[string]any // browser batches, one per visit
	server  []map[string]any   // lifecycle events, in time order
	gclids  int                // visits with a click ID (each with an install: one upload row each)
	// lastServer is the latest server event's time: they are sent once it has passed.
	lastServer time.Time
}

// planTraffic makes 60 visits on the fake's shops in the hour before now, a minute apart, two page
// views each, a third with a click ID (one in nine refused by Google's validation), the others from a
// newsletter or social campaign; every visitor then installs, half start a trial, a quarter pay, in
// the 20 s from now (after the upload mapping was made: earlier events are never uploaded).
func planTraffic(d *partnerfake.Dataset, now time.Time) traffic {
	tr := traffic{lastServer: now}
	i := 0
	for _, sh := range d.Shops {
		if sh.Test || sh.Excluded {
			continue
		}
		if i == 60 {
			break
		}
		at := now.Add(time.Duration(i-60) * time.Minute)
		acq := fmt.Sprintf("acq-%03d", i)
		ft := map[string]any{"landingUrl": testOrigin + "/"}
		switch {
		case i%3 == 0:
			click := fmt.Sprintf("test-click-%03d", i)
			if i%9 == 3 {
				click = fmt.Sprintf("invalid-click-%03d", i)
			}
			ft["gclid"], ft["landingUrl"] = click, testOrigin+"/?gclid="+click
			tr.gclids++
		case i%3 == 1:
			ft["utmSource"], ft["utmCampaign"] = "newsletter", fmt.Sprintf("n%d", i%2)
		default:
			ft["utmSource"], ft["utmCampaign"] = "social", "spring"
		}
		var batch []map[string]any
		for j, path := range []string{"/", "/pricing"} {
			batch = append(batch, map[string]any{"eventId": fmt.Sprintf("b-%03d-%d", i, j), "name": "page_view",
				"occurredAt": at.Add(time.Duration(j) * 10 * time.Second).Format(time.RFC3339Nano), "acquisitionId": acq,
				"sessionId": "s-" + acq, "url": testOrigin + path, "path": path, "title": "Cluster test", "firstTouch": ft})
		}
		tr.batches = append(tr.batches, batch)
		names := []string{"install"}
		if i%2 == 0 {
			names = append(names, "trial_started")
		}
		if i%4 == 0 {
			names = append(names, "paid")
		}
		for k, name := range names {
			when := now.Add(time.Duration(i*300+k*100) * time.Millisecond)
			if when.After(tr.lastServer) {
				tr.lastServer = when
			}
			ev := map[string]any{"eventId": fmt.Sprintf("s-%03d-%s", i, name), "name": name, "acquisitionId": acq,
				"customerRef": sh.Domain, "occurredAt": when.Format(time.RFC3339Nano)}
			if name == "paid" {
				ev["amountCents"], ev["currency"] = 1999, "USD"
			}
			tr.server = append(tr.server, ev)
		}
		i++
	}
	return tr
}

// edgeClient sends to an instance's edge as tracker.js and a publisher's server do, retrying a
// transport error, a 429 or a 5xx with the same event IDs.
type edgeClient struct {
	in     *instance
	client *http.Client
}

func newEdgeClient(in *instance) *edgeClient {
	return &edgeClient{in: in, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// post makes one attempt; status 0 is a transport error.
func (c *edgeClient) post(ctx context.Context, route string, body []byte, h http.Header) (int, []byte, time.Duration) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.in.base+route, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header = h
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var ra time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		ra = time.Duration(s) * time.Second
	}
	return resp.StatusCode, raw, ra
}

func (c *edgeClient) serverHeader() http.Header {
	return http.Header{"Authorization": {"Bearer " + c.in.privateKey}, "Content-Type": {"application/json"}}
}

func (c *edgeClient) collectHeader() http.Header {
	return http.Header{"Origin": {testOrigin}, "Content-Type": {"text/plain;charset=UTF-8"}}
}

func (c *edgeClient) serverBody(ev map[string]any) []byte {
	body := map[string]any{"teamSlug": c.in.team, "publicKey": c.in.publicKey}
	for k, v := range ev {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	return raw
}

func (c *edgeClient) collectBody(batch []map[string]any) []byte {
	raw, _ := json.Marshal(map[string]any{"key": c.in.publicKey, "batch": batch})
	return raw
}

// retry sends until a 2xx (it returns the body), a final refusal, or attempts run out.
func (c *edgeClient) retry(ctx context.Context, route string, body []byte, h http.Header, attempts int) (int, []byte) {
	wait := 300 * time.Millisecond
	var status int
	var raw []byte
	for a := 0; a < attempts; a++ {
		var ra time.Duration
		status, raw, ra = c.post(ctx, route, body, h)
		if status/100 == 2 || (status >= 400 && status < 500 && status != http.StatusTooManyRequests) {
			return status, raw
		}
		d := wait
		if ra > 0 {
			d = min(ra, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return status, raw
		case <-time.After(d):
		}
		wait = min(2*wait, 3*time.Second)
	}
	return status, raw
}

// sendAll posts the traffic's browser batches, waits until they have landed (the upload matcher
// looks a click up when the install arrives, as in production where the visit comes first), then
// the server events; every event must be acknowledged.
func (c *edgeClient) sendAll(t *testing.T, tr traffic, landed func() uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := 0
	for _, b := range tr.batches {
		if code, raw := c.retry(ctx, "/v1/collect", c.collectBody(b), c.collectHeader(), 8); code/100 != 2 || bytes.Contains(raw, []byte(`"rejected":[{`)) {
			t.Fatalf("%s: collect: %d %s", c.in.shape, code, raw)
		}
		n += len(b)
	}
	for landed() < uint64(n) {
		if ctx.Err() != nil {
			t.Fatalf("%s: %d of %d browser events landed", c.in.shape, landed(), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Until(tr.lastServer.Add(time.Second)))
	for _, ev := range tr.server {
		if code, raw := c.retry(ctx, "/api/tracking/server-events", c.serverBody(ev), c.serverHeader(), 8); code/100 != 2 {
			t.Fatalf("%s: server event: %d %s", c.in.shape, code, raw)
		}
	}
}
