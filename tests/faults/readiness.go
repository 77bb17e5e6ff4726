package main

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// readinessPoll asks every component's /readyz once per interval and keeps the answers, so each
// fault's report can say which components a load balancer would have taken out of rotation, and
// for how long.
type readinessPoll struct {
	comps    []*component
	interval time.Duration

	mu      sync.Mutex
	samples map[string][]readySample
}

type readySample struct {
	at    time.Time
	ready bool
}

func newReadinessPoll(comps []*component, interval time.Duration) *readinessPoll {
	return &readinessPoll{comps: comps, interval: interval, samples: map[string][]readySample{}}
}

func (p *readinessPoll) run(ctx context.Context) {
	client := &http.Client{Timeout: 3 * time.Second}
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var wg sync.WaitGroup
		for _, c := range p.comps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at, ready := time.Now(), false
				if resp, err := client.Get(c.baseURL() + "/readyz"); err == nil {
					resp.Body.Close()
					ready = resp.StatusCode == http.StatusOK
				}
				p.mu.Lock()
				p.samples[c.name] = append(p.samples[c.name], readySample{at, ready})
				p.mu.Unlock()
			}()
		}
		wg.Wait()
	}
}

// notReady is, per component, how long its /readyz was not 200 within [from, to]: the sum of the
// intervals from each failing sample to the next sample.
func (p *readinessPoll) notReady(from, to time.Time) map[string]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]time.Duration{}
	for name, ss := range p.samples {
		for i, s := range ss {
			if s.ready || s.at.Before(from) || s.at.After(to) {
				continue
			}
			next := to
			if i+1 < len(ss) && ss[i+1].at.Before(to) {
				next = ss[i+1].at
			}
			out[name] += next.Sub(s.at)
		}
	}
	return out
}
