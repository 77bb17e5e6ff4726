package mcp

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a tool call: the metric label, a closed vocabulary.
const (
	outcomeOK              = "ok"
	outcomeInvalidArgument = "invalid_argument"
	outcomeUnauthorized    = "unauthorized"
	outcomeForbidden       = "forbidden"
	outcomeNotFound        = "not_found"
	outcomeAmbiguous       = "ambiguous_customer"
	outcomeRateLimited     = "rate_limited"
	outcomeUnavailable     = "unavailable"
)

// metrics counts and times tool calls.
type metrics struct {
	calls   *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_mcp_tool_calls_total",
			Help: "MCP tool calls, by tool and outcome."}, []string{"tool", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "revtrack_mcp_tool_call_seconds",
			Help: "Time to answer an MCP tool call, its reads of the query service included.", Buckets: prometheus.DefBuckets}, []string{"tool"}),
	}
	reg.MustRegister(m.calls, m.seconds)
	return m
}

// outcomeOf names the outcome of a failure with the REST status status.
func outcomeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return outcomeInvalidArgument
	case http.StatusUnauthorized:
		return outcomeUnauthorized
	case http.StatusForbidden:
		return outcomeForbidden
	case http.StatusNotFound:
		return outcomeNotFound
	case http.StatusConflict:
		return outcomeAmbiguous
	case http.StatusTooManyRequests:
		return outcomeRateLimited
	}
	return outcomeUnavailable
}
