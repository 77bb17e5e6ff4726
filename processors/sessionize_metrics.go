package processors

import "github.com/prometheus/client_golang/prometheus"

// SessionMetrics counts what the sessionizer did. Counters move only after a batch's rows are in
// ClickHouse, so a retried or bisected batch is not counted twice.
type SessionMetrics struct {
	started      prometheus.Counter
	sessionized  prometheus.Counter
	duplicates   prometheus.Counter
	late         prometheus.Counter
	stateLookups prometheus.Counter
	cached       prometheus.Gauge
}

// NewSessionMetrics registers the sessionizer's metrics, labelled with the consumer name.
func NewSessionMetrics(reg prometheus.Registerer, consumer string) *SessionMetrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"consumer": consumer}, reg)
	m := &SessionMetrics{
		started: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_sessionizer_sessions_started_total",
			Help: "Sessions opened (late events that became a session of their own included)."}),
		sessionized: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_sessionizer_events_sessionized_total",
			Help: "Browser events assigned a session and landed."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_sessionizer_duplicate_events_total",
			Help: "Browser events dropped because their event ID was already counted (retries, redeliveries)."}),
		late: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_sessionizer_late_events_total",
			Help: "Browser events older than their browser's open session by more than the session gap."}),
		stateLookups: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_sessionizer_state_lookups_total",
			Help: "Browsers whose state was not in memory and was looked up in ClickHouse."}),
		cached: prometheus.NewGauge(prometheus.GaugeOpts{Name: "revtrack_sessionizer_cached_browsers",
			Help: "Browsers whose state is held in memory."}),
	}
	r.MustRegister(m.started, m.sessionized, m.duplicates, m.late, m.stateLookups, m.cached)
	return m
}
