// Package budget limits what reporting callers make the shared ClickHouse do: a per-key token
// budget weighted by the work a request causes (a kept response costs KeptCost, a computed one
// Config.ComputedCost), a smaller per-key allowance of forced recomputations (`Cache-Control:
// no-cache`), and a per-process cap on computations running at once. The query edge admits every
// REST request (and the MCP server every tool call) through it; the reporting and tracking stores
// call Compute before they compute, so only real work is charged as such. docs/API.md "Limits".
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a request is refused: the metric label and, through the query edge's error table, the
// JSON error code.
var (
	// ErrRateLimited: the key's budget cannot pay for the request now (429 rate_limited).
	ErrRateLimited = errors.New("rate_limited")
	// ErrOverloaded: every computation slot of this process stayed busy for the wait (503).
	ErrOverloaded = errors.New("overloaded")
)

// LimitError is a refusal with the time after which the same request may pass.
type LimitError struct {
	Reason     error // ErrRateLimited or ErrOverloaded
	RetryAfter time.Duration
	msg        string
}

func (e *LimitError) Error() string { return e.msg }
func (e *LimitError) Unwrap() error { return e.Reason }

// RetryAfterSeconds is the Retry-After header's value: whole seconds, at least one.
func (e *LimitError) RetryAfterSeconds() int { return seconds(e.RetryAfter) }

// Budget applies the limits of one process. Its buckets are shared by every instance (Redis); its
// computation slots are this process's own.
type Budget struct {
	cfg     Config
	buckets Buckets
	slots   chan struct{}
	metrics *metrics
}

// New returns a budget; reg receives its metrics (nil: none).
func New(cfg Config, buckets Buckets, reg prometheus.Registerer) *Budget {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	return &Budget{cfg: cfg, buckets: buckets, slots: make(chan struct{}, cfg.MaxConcurrent), metrics: newMetrics(reg)}
}

// Charge takes KeptCost from the key's budget: an MCP tool call, which costs that on its own beside
// the REST requests it makes.
func (b *Budget) Charge(ctx context.Context, keyID string) error {
	return b.take(ctx, keyID, KeptCost)
}

// Admit takes KeptCost from the key's budget for one request and returns the request's Call. The
// caller must call Done when the request ends.
func (b *Budget) Admit(ctx context.Context, keyID string) (*Call, error) {
	if err := b.take(ctx, keyID, KeptCost); err != nil {
		return nil, err
	}
	return &Call{b: b, key: keyID}, nil
}

func (b *Budget) take(ctx context.Context, keyID string, cost int) error {
	d, err := b.buckets.Take(ctx, "cost:"+keyID, b.cfg.cost(), float64(cost))
	if err != nil {
		return err
	}
	if !d.OK {
		b.metrics.refused.WithLabelValues(ErrRateLimited.Error()).Inc()
		return &LimitError{Reason: ErrRateLimited, RetryAfter: d.RetryAfter, msg: fmt.Sprintf(
			"this key's reporting budget is spent (%d units, %d back per minute; a kept response costs %d, a computed one %d): retry after %d seconds",
			b.cfg.Budget, b.cfg.RefillPerMinute, KeptCost, b.cfg.ComputedCost, seconds(d.RetryAfter))}
	}
	return nil
}

// Call is one admitted request.
type Call struct {
	b   *Budget
	key string

	mu       sync.Mutex
	started  bool  // Compute ran to its end once
	err      error // its answer, given to every later Compute of the request
	holdSlot bool
}

// ForceRecompute spends one of the key's forced recomputations and reports whether the request may
// skip the kept responses. Beyond the allowance the directive is ignored: the response is a kept
// one, which is still current (a kept response is served only while the data it was computed from
// is unchanged), so only a recomputation of unchanged data is denied.
func (c *Call) ForceRecompute(ctx context.Context) (bool, error) {
	d, err := c.b.buckets.Take(ctx, "nocache:"+c.key, c.b.cfg.noCache(), 1)
	if err != nil {
		return false, err
	}
	if !d.OK {
		c.b.metrics.noCacheIgnored.Inc()
	}
	return d.OK, nil
}

// Compute is called before the request computes anything from the data. The first call charges the
// rest of ComputedCost and takes a computation slot, waiting up to Config.ComputeWait for one; later
// calls of the same request (the parts of a summary run concurrently) share that answer. The slot is
// held until Done.
func (c *Call) Compute(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return c.err
	}
	c.started = true
	c.err = c.compute(ctx)
	return c.err
}

func (c *Call) compute(ctx context.Context) error {
	extra := c.b.cfg.ComputedCost - KeptCost
	if extra > 0 {
		if err := c.b.take(ctx, c.key, extra); err != nil {
			return err
		}
	}
	if c.acquire(ctx) {
		c.holdSlot = true
		c.b.metrics.inFlight.Inc()
		return nil
	}
	// Nothing was computed: give the charge back.
	if extra > 0 {
		if _, err := c.b.buckets.Take(context.WithoutCancel(ctx), "cost:"+c.key, c.b.cfg.cost(), -float64(extra)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.b.metrics.refused.WithLabelValues(ErrOverloaded.Error()).Inc()
	wait := max(c.b.cfg.ComputeWait, time.Second)
	return &LimitError{Reason: ErrOverloaded, RetryAfter: wait, msg: fmt.Sprintf(
		"too many reports are being computed on this server right now: retry after %d seconds", seconds(wait))}
}

// acquire takes a free slot at once, else waits up to ComputeWait for one.
func (c *Call) acquire(ctx context.Context) bool {
	select {
	case c.b.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(c.b.cfg.ComputeWait)
	defer timer.Stop()
	select {
	case c.b.slots <- struct{}{}:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// Done ends the request, freeing its computation slot.
func (c *Call) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holdSlot {
		c.holdSlot = false
		<-c.b.slots
		c.b.metrics.inFlight.Dec()
	}
}

type callKey struct{}

// WithCall lets the stores reached with ctx report their computations to c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// Compute is what a store calls before it computes a response from the data: the Call of the request
// charges it and takes a slot, or refuses with a *LimitError. Without a Call (the admin CLI, tests
// of a store) it allows everything.
func Compute(ctx context.Context) error {
	if c, ok := ctx.Value(callKey{}).(*Call); ok && c != nil {
		return c.Compute(ctx)
	}
	return nil
}

type metrics struct {
	refused        *prometheus.CounterVec
	noCacheIgnored prometheus.Counter
	inFlight       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_query_budget_refused_total",
			Help: "Reporting requests and MCP tool calls refused by the cost limits, by reason (rate_limited, overloaded)."}, []string{"reason"}),
		noCacheIgnored: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_query_no_cache_ignored_total",
			Help: "Cache-Control: no-cache directives ignored because the key's forced recomputations were spent."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "revtrack_query_computations_in_flight",
			Help: "Reporting computations running in this process."}),
	}
	reg.MustRegister(m.refused, m.noCacheIgnored, m.inFlight)
	return m
}
