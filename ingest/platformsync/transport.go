package platformsync

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revtrack/revtrack/internal/egress"
)

// transport counts the partner API requests of one client and, once the API has throttled it,
// paces them. The platform allows 4 requests per second per Partner API client: a sequential walk
// over real network latency rarely exceeds that, so requests go unpaced until the first 429 (a
// local fake without a limit is then never slowed down); from then on they are spaced to the
// configured rate, and the client still retries any 429 (another process may share the token).
type transport struct {
	base    http.RoundTripper
	metrics *Metrics
	pace    *pacer // nil: unpaced
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.pace != nil {
		if err := t.pace.wait(req.Context()); err != nil {
			return nil, err
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.metrics.request(0)
		return nil, err
	}
	t.metrics.request(resp.StatusCode)
	if resp.StatusCode == http.StatusTooManyRequests && t.pace != nil {
		t.pace.active.Store(true)
	}
	return resp, nil
}

// pacer spaces request starts at least every apart, once active.
type pacer struct {
	every  time.Duration
	active atomic.Bool
	mu     sync.Mutex
	next   time.Time
}

func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	return &pacer{every: time.Duration(float64(time.Second) / perSecond)}
}

func (p *pacer) wait(ctx context.Context) error {
	if !p.active.Load() {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.every)
	p.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// httpClient is the HTTP client of one partner connection's requests: the egress policy's (no
// redirects, no internal addresses) with pacing and metrics.
func httpClient(p egress.Policy, perSecond float64, m *Metrics) *http.Client {
	return p.Client(60*time.Second, func(base http.RoundTripper) http.RoundTripper {
		return &transport{base: base, metrics: m, pace: newPacer(perSecond)}
	})
}
