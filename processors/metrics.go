package processors

import "github.com/prometheus/client_golang/prometheus"

// LoopMetrics counts what one consume loop did.
type LoopMetrics struct {
	consumed     prometheus.Counter
	written      prometheus.Counter
	sinkErrors   prometheus.Counter
	deadLettered *prometheus.CounterVec
	batchSeconds prometheus.Observer
}

// NewLoopMetrics registers the loop's metrics, labelled with the consumer name.
func NewLoopMetrics(reg prometheus.Registerer, consumer string) *LoopMetrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"consumer": consumer}, reg)
	m := &LoopMetrics{
		consumed: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_processor_records_consumed_total",
			Help: "Records polled from Kafka."}),
		written: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_processor_records_written_total",
			Help: "Records the sink accepted."}),
		sinkErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_processor_sink_errors_total",
			Help: "Transient sink failures (each retried)."}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_processor_dead_lettered_total",
			Help: "Records sent to the dead-letter topic, by reason."}, []string{"reason"}),
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_processor_batch_write_seconds",
		Help: "Time to write one batch to the sink, retries included.", Buckets: prometheus.DefBuckets})
	m.batchSeconds = h
	r.MustRegister(m.consumed, m.written, m.sinkErrors, m.deadLettered, h)
	return m
}
