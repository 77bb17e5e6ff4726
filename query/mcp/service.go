package mcp

import (
	"context"
	"errors"
	"net/url"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/budget"
	"github.com/revtrack/revtrack/query/reporting"
)

// service is the query service as the tools call it: the reporting reads of the /api/v1 routes
// (query.Reporting), with the routes' parameter parser (query.ReportingRequest and its siblings) and
// their cost limits. The endpoint authenticates the caller once (server.go); each read a tool makes
// is then admitted against the caller's budget the way a REST request is (query/limits.go), so a
// tool answer costs, refuses and reads what its REST twin does, without a second trip through HTTP.
type service struct {
	reporting query.Reporting
	budget    *budget.Budget // nil: reads cost nothing
	now       func() time.Time
}

// queryError is a failure of the query service (a parameter it refused, a budget refusal, a failed
// read). The REST reply of the same failure words the tool error (query.ReplyOf).
type queryError struct{ err error }

func (e *queryError) Error() string { return e.err.Error() }
func (e *queryError) Unwrap() error { return e.err }

func asQueryError(err error) error {
	if err == nil {
		return nil
	}
	return &queryError{err}
}

// errNoCaller is a tool call that reached a tool without the endpoint's authentication: a bug.
var errNoCaller = errors.New("no authenticated caller in the request context")

func caller(ctx context.Context) (callerInfo, error) {
	ci, ok := callerFrom(ctx)
	if !ok {
		return ci, errNoCaller
	}
	return ci, nil
}

// reportingRequest parses the parameters of the summary and the metrics, as GET /api/v1/summary
// does, for the caller's workspace.
func (s *service) reportingRequest(ctx context.Context, q url.Values) (reporting.Request, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.Request{}, err
	}
	req, err := query.ReportingRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// customersRequest parses the parameters of GET /api/v1/customers.
func (s *service) customersRequest(ctx context.Context, q url.Values) (reporting.ListRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.ListRequest{}, err
	}
	req, err := query.CustomersRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// customerRequest parses the parameters of GET /api/v1/customers/{ref}.
func (s *service) customerRequest(ctx context.Context, ref string, q url.Values) (reporting.DetailRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.DetailRequest{}, err
	}
	req, err := query.CustomerRequest(ref, q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

func (s *service) summary(ctx context.Context, req reporting.Request) (reporting.Summary, error) {
	return read(ctx, s, true, func(ctx context.Context) (reporting.Summary, error) { return s.reporting.Summary(ctx, req) })
}

func (s *service) metric(ctx context.Context, name string, req reporting.Request) (reporting.MetricResponse, error) {
	return read(ctx, s, true, func(ctx context.Context) (reporting.MetricResponse, error) { return s.reporting.Metric(ctx, name, req) })
}

// seriesMetrics computes several metrics at every interval of a range in one computation (a series
// is not kept, as its REST route's: no-cache does not apply).
func (s *service) seriesMetrics(ctx context.Context, names []string, interval string, req reporting.Request) ([][]reporting.MetricResponse, error) {
	return read(ctx, s, false, func(ctx context.Context) ([][]reporting.MetricResponse, error) {
		return s.reporting.SeriesMetrics(ctx, names, interval, req)
	})
}

func (s *service) customers(ctx context.Context, req reporting.ListRequest) (reporting.CustomerList, error) {
	return read(ctx, s, true, func(ctx context.Context) (reporting.CustomerList, error) { return s.reporting.Customers(ctx, req) })
}

// customer reads one customer. Like its REST route it keeps no answer, so no-cache does not apply.
func (s *service) customer(ctx context.Context, req reporting.DetailRequest) (reporting.CustomerDetail, error) {
	return read(ctx, s, false, func(ctx context.Context) (reporting.CustomerDetail, error) { return s.reporting.Customer(ctx, req) })
}

// read runs one read for the caller of ctx as the /api/v1 middleware and handlers run a request:
// admitted against the key's budget (a kept answer costs its cost, a computation more, charged by
// the store when it starts one), and, for a read whose answers are kept, following the caller's
// `Cache-Control: no-cache`.
func read[T any](ctx context.Context, s *service, kept bool, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	ci, err := caller(ctx)
	if err != nil {
		return zero, err
	}
	var call *budget.Call
	if s.budget != nil {
		if call, err = s.budget.Admit(ctx, ci.caller.Principal.KeyID); err != nil {
			return zero, asQueryError(err)
		}
		defer call.Done()
		ctx = budget.WithCall(ctx, call)
	}
	if kept && ci.noCache {
		// An ignored directive has no header to say so here: the answer is a kept one, still current.
		if ctx, _, err = query.NoCacheContext(ctx, call); err != nil {
			return zero, asQueryError(err)
		}
	}
	out, err := fn(ctx)
	return out, asQueryError(err)
}

// readConcurrency is how many reads of one tool call run at once: enough to overlap the
// computations of a series, few enough not to crowd out other callers.
const readConcurrency = 4

// readAll runs n reads concurrently and returns their answers in order, or the first error.
func readAll[T any](ctx context.Context, n int, fn func(ctx context.Context, i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readConcurrency)
	for i := range n {
		g.Go(func() error {
			v, err := fn(gctx, i)
			out[i] = v
			return err
		})
	}
	return out, g.Wait()
}
