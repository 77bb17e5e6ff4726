package reporting

import (
	"context"
	"fmt"
	"slices"
)

// Metric names of GET /api/v1/metrics/{metric} (docs/METRICS.md 3.12).
const (
	MetricMRR                   = "mrr"
	MetricARR                   = "arr"
	MetricUsage                 = "usage"
	MetricNetRevenueRetention   = "net-revenue-retention"
	MetricCustomerConcentration = "customer-concentration"
)

// Metrics lists the metric names in the order the documentation gives them.
var Metrics = []string{MetricMRR, MetricARR, MetricUsage, MetricNetRevenueRetention, MetricCustomerConcentration}

// MRRBlock is the mrr metric of one currency (METRICS 3.1–3.3).
type MRRBlock struct {
	MRRCents             int64 `json:"mrrCents"`
	SubscriptionMRRCents int64 `json:"subscriptionMrrCents"`
	UsageMRRCents        int64 `json:"usageMrrCents"`
}

// ARRBlock is the arr metric (METRICS 3.4).
type ARRBlock struct {
	ARRCents int64 `json:"arrCents"`
}

// NRRBlock is the net-revenue-retention metric (METRICS 3.8).
type NRRBlock struct {
	NetRevenueRetentionRate *Ratio `json:"netRevenueRetentionRate"`
}

// ConcentrationBlock is the customer-concentration metric (METRICS 3.9).
type ConcentrationBlock struct {
	LargestCustomerShare *Ratio `json:"largestCustomerShare"`
	TopFiveCustomerShare *Ratio `json:"topFiveCustomerShare"`
	TopTenCustomerShare  *Ratio `json:"topTenCustomerShare"`
}

// MetricResponse is GET /api/v1/metrics/{metric}: the summary envelope with one metric per
// currency (METRICS 3.12). byCurrency values are MRRBlock, ARRBlock, UsageBlock, NRRBlock or
// ConcentrationBlock as the metric says.
type MetricResponse struct {
	Envelope
	Metric      string         `json:"metric"`
	MetricBasis *string        `json:"metricBasis,omitempty"`
	ByCurrency  map[string]any `json:"byCurrency"`
}

// Metric computes one focused metric; an unknown name is ErrNotFound. It reads only what the metric
// shows (metricNeeds), or projects a kept summary.
func (s *Store) Metric(ctx context.Context, name string, req Request) (MetricResponse, error) {
	if !slices.Contains(Metrics, name) {
		return MetricResponse{}, fmt.Errorf("%w: unknown metric %q (one of %v)", ErrNotFound, name, Metrics)
	}
	generatedAt := s.now().UTC()
	r, err := s.summaryResult(ctx, req, metricNeeds[name])
	if err != nil {
		return MetricResponse{}, err
	}
	return focus(name, r.summary(s, req, generatedAt)), nil
}

// metricNeeds are what each metric shows beyond its currencies (summaryNeeds).
var metricNeeds = map[string]summaryNeeds{
	MetricMRR:                   {},
	MetricARR:                   {},
	MetricUsage:                 {observedSums: true},
	MetricNetRevenueRetention:   {},
	MetricCustomerConcentration: {usageByCustomer: true},
}

// focus projects a summary onto one metric.
func focus(name string, sum Summary) MetricResponse {
	out := MetricResponse{Envelope: sum.Envelope, Metric: name, ByCurrency: map[string]any{}}
	basis := func(b string) *string { return &b }
	switch name {
	case MetricNetRevenueRetention:
		out.MetricBasis = basis(basisNRR)
	case MetricCustomerConcentration:
		out.MetricBasis = basis(basisTotalMRR)
	}
	for cur, b := range sum.ByCurrency {
		switch name {
		case MetricMRR:
			out.ByCurrency[cur] = MRRBlock{MRRCents: b.MRRCents, SubscriptionMRRCents: b.SubscriptionMRRCents, UsageMRRCents: b.UsageMRRCents}
		case MetricARR:
			out.ByCurrency[cur] = ARRBlock{ARRCents: b.ARRCents}
		case MetricUsage:
			out.ByCurrency[cur] = b.Usage
		case MetricNetRevenueRetention:
			out.ByCurrency[cur] = NRRBlock{NetRevenueRetentionRate: b.NetRevenueRetentionRate}
		case MetricCustomerConcentration:
			out.ByCurrency[cur] = ConcentrationBlock{LargestCustomerShare: b.LargestCustomerShare, TopFiveCustomerShare: b.TopFiveCustomerShare,
				TopTenCustomerShare: b.TopTenCustomerShare}
		}
	}
	return out
}
