package mcp

import (
	"context"

	"github.com/revtrack/revtrack/query/reporting"
)

const getSummaryDescription = "Workspace revenue summary for a date range, exactly as the REST endpoint GET /api/v1/summary returns it. " +
	"Per currency (`byCurrency`): total MRR and its subscription and usage parts, ARR, paying customers, ARPU per paying customer, " +
	"net revenue retention over the range (ratio), the share of MRR held by the largest 1, 5 and 10 customers (fractions 0..1), " +
	"billed usage and observed usage charges in the range. Also usage activity (received usage events), `coverage` (which dates of " +
	"history are loaded) and `staleDataWarning` (why figures may be incomplete); read both before treating missing history as zero. " +
	"Use it for questions like \"what is our MRR\", \"how many customers pay\", \"how concentrated is revenue\"." + moneyNote

func (t *tools) getSummary() toolDef {
	return newTool(t, "get_summary", "Revenue summary", getSummaryDescription, nil, func(ctx context.Context, a ReportingArgs) (reporting.Summary, error) {
		req, err := t.svc.reportingRequest(ctx, a.values())
		if err != nil {
			return reporting.Summary{}, err
		}
		return t.svc.summary(ctx, req)
	})
}
