// Package ingest is the HTTP edge that accepts tracking data: it serves tracker.js, collects browser
// events (POST /v1/collect) and verified server events (POST /api/tracking/server-events),
// deduplicates server event IDs and enforces rate limits in Redis, and answers 2xx only after Kafka
// acknowledged the write with all in-sync replicas.
package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
)

// ControlPlane resolves keys and sources (controlplane.Store).
type ControlPlane interface {
	SourceWithWorkspace(ctx context.Context, pk string) (controlplane.Source, controlplane.Workspace, error)
	AuthenticateServerKey(ctx context.Context, private, pk, teamSlug string) (controlplane.Source, controlplane.Workspace, error)
}

// Producer writes records asynchronously and calls promise with each one's outcome (kgo.Client):
// the edge waits on the promises, so concurrent requests share the producer's linger and batches
// (ProduceSync flushes at once, which left batches of 2-3 records: docs/BENCHMARKS.md, issue 17).
type Producer interface {
	Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error))
}

var (
	_ ControlPlane = (*controlplane.Store)(nil)
	_ Producer     = (*kgo.Client)(nil)
)

// Deps are the edge's collaborators.
type Deps struct {
	ControlPlane ControlPlane
	Producer     Producer
	Deduper      Deduper
	Limiter      Limiter
	// Admitter applies the limit and reserves the event ID of a valid server event in one step.
	Admitter Admitter
	// Topics are the full topic names (with any configured suffix).
	BrowserTopic, ServerTopic string
	Registry                  prometheus.Registerer
	Log                       *slog.Logger
	Now                       func() time.Time
}

// Service is the ingest edge.
type Service struct {
	cfg      Config
	d        Deps
	policy   LimitPolicy
	metrics  *metrics
	confirms *confirmBatcher
	// recs and fast, when both the control plane and the admitter offer them, admit a request in
	// one Redis script (edge_admit.go); refs are the public keys it knows.
	recs edgeRecords
	fast edgeAdmitter
	refs edgeRefs
	// hand counts the requests on their way to the producer (handoff.go).
	hand handoff
}

// New builds the edge.
func New(cfg Config, d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Service{cfg: cfg, d: d, metrics: newMetrics(d.Registry), confirms: newConfirmBatcher(d.Deduper, d.Log), policy: staticPolicy{
		server:  Limit{N: cfg.ServerEventsPerMinute, Window: time.Minute},
		browser: Limit{N: cfg.BrowserRequestsPerMinute, Window: time.Minute},
	}}
	s.recs, _ = d.ControlPlane.(edgeRecords)
	s.fast, _ = d.Admitter.(edgeAdmitter)
	if m, ok := d.Admitter.(edgeManyAdmitter); ok {
		s.fast = newAdmitPipeline(m, cfg.ProduceTimeout, s.metrics.admitBatch)
	}
	s.hand.flushes = s.metrics.flushes
	if f, ok := d.Producer.(flusher); ok && cfg.FlushWhenIdle {
		s.hand.f = f
	}
	return s
}

const (
	kindServer  = "server"
	kindBrowser = "browser"

	routeServerEvents = "/api/tracking/server-events"
	routeCollect      = "/v1/collect"
	routeTrackerJS    = "/v1/tracker.js"
)

// Register mounts the edge's routes.
func (s *Service) Register(r gin.IRouter) {
	r.POST(routeServerEvents, s.serverEvents)
	r.OPTIONS(routeCollect, s.collectPreflight)
	r.POST(routeCollect, s.collect)
	r.GET(routeTrackerJS, serveTrackerJS)
	r.HEAD(routeTrackerJS, serveTrackerJS)
}

// readBody reads at most limit bytes; a larger body is errPayloadTooLarge.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, errPayloadTooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errPayloadTooLarge
	}
	if err != nil {
		return nil, errInvalidBody
	}
	return b, nil
}

// checkWorkspace applies the access rules shared by both event routes.
func checkWorkspace(w controlplane.Workspace, src controlplane.Source) error {
	if !src.Enabled {
		return errSourceUnavailable
	}
	if !w.HasAccess() {
		return errSubscription
	}
	if !slices.Contains(w.SelectedAppIDs, src.AppID) {
		return errAppNotSelected
	}
	return nil
}

func bearer(c *gin.Context) string {
	h := c.GetHeader("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// settleTimeout bounds the dedup confirm or release that follows a write. It is its own budget,
// apart from the request's: that work must happen even when the client has gone away or the edge
// has already answered, and it is longer than the Redis client's own timeouts so those decide.
const settleTimeout = 5 * time.Second

// produce writes recs and waits for Kafka to acknowledge all of them, but never longer than
// cfg.ProduceTimeout: then it returns errUnacknowledged whatever the broker is doing. settle, when
// not nil, is called once with the outcome (a nil error: every record acknowledged) as soon as it is
// known, on the producer's promise goroutine: it must not block (the edge's only queues work).
//
// The records go to the producer's buffer one by one and the wait is on their promises, so the
// producer's linger batches them with other requests' records; 2xx still waits for acks=all of
// every record. The write runs on a context detached from the request: a client that disconnects
// must not cancel it half-way, and the deadline still fails the records that were not sent by the
// time the edge gives up, so that they are not written after the 503 as well. A record already sent
// cannot be recalled (the idempotent producer waits for its outcome): it may land after the 503.
func (s *Service) produce(ctx context.Context, handed func(), settle func(error), recs ...*kgo.Record) error {
	if len(recs) == 0 {
		handed()
		// No promise would ever complete the wait.
		if settle != nil {
			settle(nil)
		}
		return nil
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ProduceTimeout)
	defer cancel()
	var (
		gaveUp  atomic.Bool
		left    atomic.Int32
		failed  atomic.Pointer[error]
		done    = make(chan error, 1)
		start   = time.Now()
		promise = func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
			if left.Add(-1) != 0 {
				return
			}
			var first error
			if p := failed.Load(); p != nil {
				first = *p
			}
			s.metrics.produce.Observe(time.Since(start).Seconds())
			s.metrics.produceOutcome(first, gaveUp.Load())
			if first != nil {
				s.d.Log.Warn("produce failed", "err", first, "records", len(recs), "after_answer", gaveUp.Load())
			}
			if settle != nil {
				settle(first)
			}
			done <- first
		}
	)
	left.Store(int32(len(recs)))
	for _, r := range recs {
		s.d.Producer.Produce(pctx, r, promise)
	}
	handed()
	select {
	case err := <-done:
		return producedOrUnavailable(err)
	case <-pctx.Done():
	}
	select {
	case err := <-done: // the outcome came with the deadline
		return producedOrUnavailable(err)
	default:
	}
	gaveUp.Store(true)
	s.metrics.produceOutcomes.WithLabelValues("timed_out").Inc()
	s.d.Log.Warn("Kafka did not acknowledge in time; answering 503, the write may still land",
		"timeout", s.cfg.ProduceTimeout, "records", len(recs))
	return errUnacknowledged
}

func producedOrUnavailable(err error) error {
	if err != nil {
		return errUnavailable
	}
	return nil
}

func (s *Service) reject(c *gin.Context, route string, err error) {
	ae := writeError(c, err)
	s.metrics.requests.WithLabelValues(route, string(ae.Code)).Inc()
	if ae.Status() >= 500 {
		s.d.Log.Warn("request failed", "route", route, "error", ae.Code, "err", err)
	}
}
