package mcp

import (
	"context"
	"net/url"
	"strconv"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
)

// MovementIntervalArgs is the interval of the movement tools.
type MovementIntervalArgs struct {
	Interval string `json:"interval,omitempty" jsonschema:"enum=day,enum=week,enum=month" jsonschema_description:"The intervals the range is cut into: month (default, calendar months), week (ISO weeks, Monday to Sunday) or day; the first and last are clipped to the range. Only each interval's ends count: a customer who churns and comes back inside one interval shows its net change, so use day to see every change."`
}

// GetMRRMovementsArgs are get_mrr_movements' arguments: those of GET /api/v1/mrr-movements.
type GetMRRMovementsArgs struct {
	MovementIntervalArgs
	ReportingArgs
}

func (a GetMRRMovementsArgs) values() url.Values {
	q := a.ReportingArgs.values()
	set(q, "interval", a.Interval)
	return q
}

// ListMRRMovementCustomersArgs are list_mrr_movement_customers' arguments: those of GET
// /api/v1/mrr-movements/customers.
type ListMRRMovementCustomersArgs struct {
	Type   string `json:"type" jsonschema:"enum=new,enum=expansion,enum=contraction,enum=churn,enum=reactivation" jsonschema_description:"The movement whose customers to list: new, expansion, contraction, churn or reactivation."`
	Period string `json:"period" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"Any date (YYYY-MM-DD) of the interval to list, within the range: e.g. the periodFrom or date of one of get_mrr_movements' periods."`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=200" jsonschema_description:"Customers per page: 1 to 200. Default: 50."`
	Cursor string `json:"cursor,omitempty" jsonschema_description:"nextCursor of the previous page, to read the next one. Omit for the first page."`
	MovementIntervalArgs
	ReportingArgs
}

func (a ListMRRMovementCustomersArgs) values() url.Values {
	q := a.ReportingArgs.values()
	set(q, "interval", a.Interval)
	set(q, "type", a.Type)
	set(q, "period", a.Period)
	if a.Limit != 0 {
		q.Set("limit", strconv.Itoa(a.Limit))
	}
	set(q, "cursor", a.Cursor)
	return q
}

// The vocabulary is ChartMogul's as docs/METRICS.md 3.14 defines it; the description states the
// decisions a model would otherwise guess (a freeze is churn, a reinstall reactivation).
const getMRRMovementsDescription = "How subscription MRR moved, per interval of the range and per currency, exactly as the REST " +
	"endpoint GET /api/v1/mrr-movements returns it. Each period {periodFrom, date, byCurrency} compares every customer's " +
	"monthly subscription value at the interval's opening (the end of the day before periodFrom) with its value on `date`: " +
	"new (started paying, never paid in that currency before), expansion (pays more: upgrade), contraction (pays less but " +
	"still pays: downgrade), churn (stopped paying: uninstall, cancellation, a frozen charge, payments that stopped), " +
	"reactivation (pays again after having paid before: unfreeze, reinstall). Amounts (newCents, expansionCents, " +
	"contractionCents, churnCents, reactivationCents) are positive, with the customer counts beside them; " +
	"endMrrCents = startMrrCents + new + expansion + reactivation - contraction - churn exactly, and netCents = end - start. " +
	"An annual plan counts with its monthly value; a trial is not paying, its first paid period is new; a currency switch is " +
	"churn in one currency and new or reactivation in the other. The basis is subscription MRR (usage MRR is left out). " +
	"Use list_mrr_movement_customers to see who is behind one movement. Also `coverage` and `staleDataWarning`." + moneyNote

const listMRRMovementCustomersDescription = "The customers behind one MRR movement (type) in one interval (the interval of the " +
	"range that contains `period`), exactly as the REST endpoint GET /api/v1/mrr-movements/customers returns them: " +
	"{id, appId, name, domain, currency, startMrrCents, endMrrCents, movementCents} ordered by id, where movementCents = " +
	"endMrrCents - startMrrCents (negative for contraction and churn). Pass the same range, interval, currency, appId and " +
	"customerScope as the get_mrr_movements call whose figure you are explaining: the customers then add up to that movement's " +
	"cents and count. Paged: pass nextCursor back as cursor; null means the last page. A customer who switched currency " +
	"appears once per currency. Use get_customer with an id for its detail." + moneyNote

func (t *tools) getMRRMovements() toolDef {
	return newTool(t, "get_mrr_movements", "MRR movements", getMRRMovementsDescription, nil,
		func(ctx context.Context, a GetMRRMovementsArgs) (reporting.Movements, error) {
			req, err := t.svc.movementsRequest(ctx, a.values())
			if err != nil {
				return reporting.Movements{}, err
			}
			return t.svc.movements(ctx, req)
		})
}

func (t *tools) listMRRMovementCustomers() toolDef {
	return newTool(t, "list_mrr_movement_customers", "Customers behind an MRR movement", listMRRMovementCustomersDescription,
		nil,
		func(ctx context.Context, a ListMRRMovementCustomersArgs) (reporting.MovementCustomerList, error) {
			req, err := t.svc.movementCustomersRequest(ctx, a.values())
			if err != nil {
				return reporting.MovementCustomerList{}, err
			}
			return t.svc.movementCustomers(ctx, req)
		})
}

// movementsRequest parses the parameters of GET /api/v1/mrr-movements, as the route does.
func (s *service) movementsRequest(ctx context.Context, q url.Values) (reporting.MovementsRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.MovementsRequest{}, err
	}
	req, err := query.MovementsRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// movementCustomersRequest parses the parameters of GET /api/v1/mrr-movements/customers.
func (s *service) movementCustomersRequest(ctx context.Context, q url.Values) (reporting.MovementCustomersRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.MovementCustomersRequest{}, err
	}
	req, err := query.MovementCustomersRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// Movements are computed on every request, never kept (query/reporting/movements.go), so no-cache
// has nothing to apply to, as for a series.
func (s *service) movements(ctx context.Context, req reporting.MovementsRequest) (reporting.Movements, error) {
	return read(ctx, s, false, func(ctx context.Context) (reporting.Movements, error) { return s.reporting.Movements(ctx, req) })
}

func (s *service) movementCustomers(ctx context.Context, req reporting.MovementCustomersRequest) (reporting.MovementCustomerList, error) {
	return read(ctx, s, false, func(ctx context.Context) (reporting.MovementCustomerList, error) {
		return s.reporting.MovementCustomers(ctx, req)
	})
}
