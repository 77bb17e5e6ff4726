package platformsync

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the sync did. A nil *Metrics records nothing (tests that need none).
type Metrics struct {
	runs       *prometheus.CounterVec
	runSeconds *prometheus.HistogramVec
	inFlight   prometheus.Gauge
	busy       *prometheus.CounterVec
	records    *prometheus.CounterVec
	requests   *prometheus.CounterVec
	throttled  prometheus.Counter
	progress   prometheus.Counter
}

// NewMetrics builds the sync's metrics and registers them with reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_platform_sync_runs_total",
			Help: "Finished sync runs, by trigger and status (succeeded, partial, failed)."}, []string{"trigger", "status"}),
		runSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "revtrack_platform_sync_run_seconds",
			Help: "Duration of finished sync runs.", Buckets: prometheus.ExponentialBuckets(1, 4, 8)}, []string{"trigger"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "revtrack_platform_sync_runs_in_flight",
			Help: "Sync runs this process is executing."}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_platform_sync_already_running_total",
			Help: "Runs not started because another run of the same app held its lock, by trigger."}, []string{"trigger"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_platform_sync_records_total",
			Help: "Records produced to the platform-records topic, by stream and walk (forward, backward)."}, []string{"stream", "walk"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_platform_sync_api_requests_total",
			Help: "Partner API requests, by HTTP status (\"error\" when no response came)."}, []string{"status"}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_platform_sync_throttled_total",
			Help: "Partner API answers with HTTP 429 (each is retried after a backoff)."}),
		progress: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_platform_sync_progress_publish_failures_total",
			Help: "Failed writes of a running run's progress to Redis (the run goes on; readers see no progress until one succeeds)."}),
	}
	if reg != nil {
		reg.MustRegister(m.runs, m.runSeconds, m.inFlight, m.busy, m.records, m.requests, m.throttled, m.progress)
	}
	return m
}

func (m *Metrics) run(trigger, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(trigger, status).Inc()
	m.runSeconds.WithLabelValues(trigger).Observe(d.Seconds())
}

func (m *Metrics) started(delta float64) {
	if m != nil {
		m.inFlight.Add(delta)
	}
}

func (m *Metrics) alreadyRunning(trigger string) {
	if m != nil {
		m.busy.WithLabelValues(trigger).Inc()
	}
}

func (m *Metrics) produced(stream, walk string, n int) {
	if m != nil {
		m.records.WithLabelValues(stream, walk).Add(float64(n))
	}
}

func (m *Metrics) request(status int) {
	if m == nil {
		return
	}
	label := "error"
	if status > 0 {
		label = strconv.Itoa(status)
	}
	m.requests.WithLabelValues(label).Inc()
	if status == 429 {
		m.throttled.Inc()
	}
}

func (m *Metrics) progressFailed() {
	if m != nil {
		m.progress.Inc()
	}
}
