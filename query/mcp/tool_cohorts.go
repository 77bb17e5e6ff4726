package mcp

import (
	"context"
	"net/url"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
)

// GetCohortsArgs are get_cohorts' arguments: those of GET /api/v1/cohorts.
type GetCohortsArgs struct {
	By string `json:"by,omitempty" jsonschema:"enum=install,enum=first_paid" jsonschema_description:"What a cohort groups by: the month of the customer's first install (install, the default) or of its first subscription payment (first_paid)."`
	ReportingArgs
}

func (a GetCohortsArgs) values() url.Values {
	q := a.ReportingArgs.values()
	set(q, "by", a.By)
	return q
}

// docs/METRICS.md 3.15; the description says how to read retention off the answer.
const getCohortsDescription = "Customers grouped by the month they first installed (by install, the default) or first paid a " +
	"subscription (by first_paid), one cohort per calendar month of the range (at most 13), exactly as the REST endpoint " +
	"GET /api/v1/cohorts returns it: each cohort's size (customers, paying or not) and, for each month from the cohort's " +
	"through the range's last, evaluated on the month's last date (the range's `to` for the last), the cohort's customers " +
	"still paying and their subscription MRR, per currency (payingCustomers, mrrCents). Retention reads across a cohort's " +
	"months: payingCustomers / customers, or mrrCents against the cohort's first month. Usage MRR is left out. " +
	"Also `coverage` and `staleDataWarning`." + moneyNote

func (t *tools) getCohorts() toolDef {
	return newTool(t, "get_cohorts", "Cohorts", getCohortsDescription, nil,
		func(ctx context.Context, a GetCohortsArgs) (reporting.Cohorts, error) {
			req, err := t.svc.cohortsRequest(ctx, a.values())
			if err != nil {
				return reporting.Cohorts{}, err
			}
			return t.svc.cohorts(ctx, req)
		})
}

// cohortsRequest parses the parameters of GET /api/v1/cohorts, as the route does.
func (s *service) cohortsRequest(ctx context.Context, q url.Values) (reporting.CohortsRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.CohortsRequest{}, err
	}
	req, err := query.CohortsRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// Cohorts are computed on every request, never kept (query/reporting/cohorts.go), so no-cache has
// nothing to apply to.
func (s *service) cohorts(ctx context.Context, req reporting.CohortsRequest) (reporting.Cohorts, error) {
	return read(ctx, s, false, func(ctx context.Context) (reporting.Cohorts, error) { return s.reporting.Cohorts(ctx, req) })
}
