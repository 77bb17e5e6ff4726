package partnerfake

import (
	"strings"
	"sync"
	"time"
)

// bucket is a token bucket: Burst tokens, refilled at RequestsPerSecond. The platform documents
// "4 requests per second per Partner API client"; a bucket of 4 refilled at 4/s allows exactly that
// sustained rate with a burst of 4.
type bucket struct {
	tokens float64
	last   time.Time
}

type limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[string]*bucket
}

func (l *limiter) allow(token string, now time.Time) bool {
	if l.rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[token]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[token] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Fault is a scripted answer for tests: the next Times requests that match (after
// authentication) get Status and Body instead of being executed. Faults queue in order; the head
// fault applies until used up.
type Fault struct {
	// Status is the HTTP status to answer, e.g. 429, 500, 502, 503; 200 with a Body fakes a
	// GraphQL-level error.
	Status int
	// Times is how many matching requests get the fault; 0 means 1.
	Times int
	// Match restricts the fault to requests whose JSON body (query and variables) contains it,
	// e.g. "transactions" or "events"; empty matches every request.
	Match string
	// Body replaces the default body for Status (the documented JSON error shape for 400, 401,
	// 404, 429 and 500).
	Body string
	// Delay waits before answering (or before executing, with Status 0), to exercise client
	// timeouts.
	Delay time.Duration
}

type faultQueue struct {
	mu     sync.Mutex
	faults []Fault
}

func (q *faultQueue) push(fs ...Fault) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range fs {
		if f.Times <= 0 {
			f.Times = 1
		}
		q.faults = append(q.faults, f)
	}
}

// take returns the fault for a request with this query, consuming one use.
func (q *faultQueue) take(query string) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.faults) == 0 || !strings.Contains(query, q.faults[0].Match) {
		return Fault{}, false
	}
	f := q.faults[0]
	if q.faults[0].Times--; q.faults[0].Times == 0 {
		q.faults = q.faults[1:]
	}
	return f, true
}

func (q *faultQueue) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults = nil
}
