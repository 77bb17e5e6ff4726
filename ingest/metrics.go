package ingest

import "github.com/prometheus/client_golang/prometheus"

// metrics counts every request and event by outcome; the outcome label is the error code of
// errors.go, or "accepted" / "duplicate".
type metrics struct {
	requests *prometheus.CounterVec
	events   *prometheus.CounterVec
	produce  prometheus.Histogram
	// produceOutcomes: acknowledged, failed, timed_out (answered 503 before the outcome), and
	// late_acknowledged, late_failed (the outcome of a write after its timed_out answer).
	produceOutcomes *prometheus.CounterVec
	// admitBatch: admissions per Redis round trip (admitPipeline).
	admitBatch prometheus.Histogram
	// flushes: times the last request on its way to the producer had it send its buffer (handoff).
	flushes prometheus.Counter
}

func (m *metrics) produceOutcome(err error, late bool) {
	outcome := "acknowledged"
	if err != nil {
		outcome = "failed"
	}
	if late {
		outcome = "late_" + outcome
	}
	m.produceOutcomes.WithLabelValues(outcome).Inc()
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_ingest_requests_total",
			Help: "Ingest requests by route and outcome."}, []string{"route", "outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_ingest_events_total",
			Help: "Events by kind (browser, server) and outcome."}, []string{"kind", "outcome"}),
		produce: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_ingest_produce_seconds",
			Help: "Time until Kafka acknowledged a produce (acks=all).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		produceOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_ingest_produce_outcomes_total",
			Help: "Produce calls by outcome: acknowledged, failed, timed_out (answered 503 first), late_acknowledged, late_failed."},
			[]string{"outcome"}),
		admitBatch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_ingest_admission_batch_size",
			Help: "Requests admitted in one Redis round trip (one script each).", Buckets: prometheus.ExponentialBuckets(1, 2, 9)}),
		flushes: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_ingest_producer_flushes_total",
			Help: "Times the producer sent its buffer before the linger ended, because no other request was on its way to it."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.events, m.produce, m.produceOutcomes, m.admitBatch, m.flushes)
	}
	return m
}
