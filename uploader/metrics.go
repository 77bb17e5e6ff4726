package uploader

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Ingest-request outcomes: a closed vocabulary used as the metric label and log field.
const (
	outcomeValidated       = "validated"
	outcomeAccepted        = "accepted"
	outcomeTransient       = "transient"
	outcomeQuota           = "quota"
	outcomePermanent       = "permanent"
	outcomeUnauthenticated = "unauthenticated"
)

// Queue-consumer results per record, and the dead-letter reasons (closed vocabularies).
const (
	recordInserted  = "inserted"
	recordDuplicate = "duplicate"
	recordDead      = "dead_lettered"

	reasonDecodeError    = "decode_error"
	reasonInvalidMessage = "invalid_message"
	reasonUnknownMapping = "unknown_mapping"
)

// Metrics counts what the uploader did. Registered on an injected registerer.
type Metrics struct {
	transitions  *prometheus.CounterVec
	requests     *prometheus.CounterVec
	requestTime  prometheus.Observer
	dispatchWait prometheus.Observer
	polls        *prometheus.CounterVec
	records      *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
}

// NewMetrics registers the uploader's metrics on reg (nil: unregistered, for tools and tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_row_transitions_total",
			Help: "Upload-queue row state changes, by state before (new for a created row) and after."}, []string{"from", "to"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_ingest_requests_total",
			Help: "events:ingest requests, by outcome (validated, accepted, transient, quota, permanent, unauthenticated)."},
			[]string{"outcome"}),
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_diagnostics_polls_total",
			Help: "requestStatus:retrieve calls, by the request status returned (or the error class)."}, []string{"status"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_queue_records_total",
			Help: "Upload jobs consumed, by result (inserted, duplicate, dead_lettered)."}, []string{"result"}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_queue_dead_lettered_total",
			Help: "Upload jobs sent to the dead-letter topic, by reason."}, []string{"reason"}),
	}
	rt := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_upload_ingest_request_seconds",
		Help: "Duration of one events:ingest request.", Buckets: prometheus.DefBuckets})
	dw := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_upload_dispatch_delay_seconds",
		Help:    "Time from a row's creation to its first ingestion outcome (validated, accepted or rejected by the platform).",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10)})
	m.requestTime, m.dispatchWait = rt, dw
	if reg != nil {
		reg.MustRegister(m.transitions, m.requests, m.polls, m.records, m.deadLettered, rt, dw)
	}
	return m
}

func (m *Metrics) transition(from, to Status) {
	if m != nil {
		m.transitions.WithLabelValues(string(from), string(to)).Inc()
	}
}

func (m *Metrics) request(outcome string, took time.Duration) {
	if m != nil {
		m.requests.WithLabelValues(outcome).Inc()
		m.requestTime.Observe(took.Seconds())
	}
}

func (m *Metrics) poll(status string) {
	if m != nil {
		m.polls.WithLabelValues(status).Inc()
	}
}

func (m *Metrics) record(result string, n int) {
	if m != nil && n > 0 {
		m.records.WithLabelValues(result).Add(float64(n))
	}
}

func (m *Metrics) deadLetter(reason string) {
	if m != nil {
		m.deadLettered.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) firstOutcome(created, now time.Time) {
	if m != nil {
		m.dispatchWait.Observe(now.Sub(created).Seconds())
	}
}
