package analystmrr

import "github.com/prometheus/client_golang/prometheus"

// Metrics count what the job did.
type Metrics struct {
	rounds     *prometheus.CounterVec // by result: ok, failed
	recomputed prometheus.Counter
	rows       *prometheus.CounterVec // by table
	errors     prometheus.Counter
	seconds    prometheus.Observer
}

// NewMetrics registers the job's metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_analyst_mrr_rounds_total",
			Help: "Rounds of the analyst MRR job, by result (ok, failed: some workspace app failed)."}, []string{"result"}),
		recomputed: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_analyst_mrr_recomputed_total",
			Help: "Workspace apps whose daily MRR and movements were recomputed (written as a new generation)."}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_analyst_mrr_rows_written_total",
			Help: "Rows written, by table (customer_mrr_spans, customer_mrr_movements)."}, []string{"table"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_analyst_mrr_errors_total",
			Help: "Workspace apps whose recomputation failed (retried next round)."}),
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "revtrack_analyst_mrr_round_seconds",
		Help: "Duration of a round, every recomputation included.", Buckets: []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900}})
	m.seconds = h
	if reg != nil {
		reg.MustRegister(m.rounds, m.recomputed, m.rows, m.errors, h)
	}
	return m
}
