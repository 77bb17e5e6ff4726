package mcp

import (
	"context"

	"github.com/revtrack/revtrack/query/reporting"
)

// GetReportArgs are get_report's arguments.
type GetReportArgs struct {
	Report string `json:"report" jsonschema:"enum=net-revenue-retention,enum=customer-concentration" jsonschema_description:"The report: net-revenue-retention or customer-concentration."`
	ReportingArgs
}

const getReportDescription = "One report, exactly as the REST endpoint GET /api/v1/metrics/{report} returns it, per currency. " +
	"`net-revenue-retention`: of the subscription MRR paying customers had when the range opened (the day before `from`), " +
	"the fraction still there on `to`, counting their upgrades, downgrades and churn but no new customers " +
	"(a ratio: 1.05 = 105 %; null when nobody paid at the opening; not annualised, so a 30-day range gives 30-day retention). " +
	"`customer-concentration`: the share of each currency's total MRR (subscription plus usage) held by its largest customer, " +
	"its 5 largest and its 10 largest on `to` (fractions 0..1; null when the currency has no MRR). " +
	"Also `coverage` and `staleDataWarning`: read them before trusting a low figure." + moneyNote

func (t *tools) getReport() toolDef {
	return newTool(t, "get_report", "Retention or concentration report", getReportDescription, nil,
		func(ctx context.Context, a GetReportArgs) (reporting.MetricResponse, error) {
			req, err := t.svc.reportingRequest(ctx, a.values())
			if err != nil {
				return reporting.MetricResponse{}, err
			}
			// The schema's enum has admitted only the two reports.
			return t.svc.metric(ctx, a.Report, req)
		})
}
