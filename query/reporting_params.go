package query

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/reporting"
)

// ReportingRequest parses the parameters of GET /api/v1/summary and /api/v1/metrics/{metric} for
// workspace w (from, to, appId, currency, customerScope), with now the clock of the default range.
func ReportingRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.Request, error) {
	var req reporting.Request
	var err error
	if req.Range, err = reportingRange(q, now); err != nil {
		return req, err
	}
	if req.Scope, req.AppID, err = coveredApps(q, w); err != nil {
		return req, err
	}
	if req.Currency, err = currencyParam(q); err != nil {
		return req, err
	}
	req.CustomerScope, err = customerScopeParam(q)
	return req, err
}

// CustomersRequest parses the parameters of GET /api/v1/customers (from, to, appId, customerScope,
// limit, cursor, q, paying).
func CustomersRequest(q url.Values, w controlplane.Workspace, now time.Time) (reporting.ListRequest, error) {
	var req reporting.ListRequest
	var err error
	req.Range, err = reportingRange(q, now)
	if err == nil {
		req.Scope, _, err = coveredApps(q, w)
	}
	if err == nil {
		req.CustomerScope, err = customerScopeParam(q)
	}
	if err == nil {
		req.Limit, err = parseLimit(q, reporting.DefaultCustomerLimit, reporting.MaxCustomerLimit)
	}
	if err == nil {
		err = notApplied(q, "currency", "each customer carries its figures in every currency")
	}
	if err == nil {
		req.Search, err = searchParam(q)
	}
	if err == nil {
		req.Paying, err = payingParam(q)
	}
	req.Cursor = q.Get("cursor")
	return req, err
}

// maxSearchLength bounds q: a shop domain or name is short, and a longer q can only match nothing.
const maxSearchLength = 100

// searchParam reads q: at most maxSearchLength characters, at least one once trimmed (the OpenAPI
// schema states the same: maxLength and a non-space character); "" when absent.
func searchParam(q url.Values) (string, error) {
	if !q.Has("q") {
		return "", nil
	}
	raw := q.Get("q")
	s := strings.TrimSpace(raw)
	if s == "" || utf8.RuneCountInString(raw) > maxSearchLength || !utf8.ValidString(raw) {
		return "", invalidParam("q must be 1 to %d characters of a shop domain or name, not only spaces", maxSearchLength)
	}
	return s, nil
}

// payingParam reads paying: true or false; nil (both) when absent.
func payingParam(q url.Values) (*bool, error) {
	if !q.Has("paying") {
		return nil, nil
	}
	switch q.Get("paying") {
	case "true":
		return new(true), nil
	case "false":
		return new(false), nil
	}
	return nil, invalidParam("paying must be true or false")
}

// CustomerRequest parses the parameters of GET /api/v1/customers/{customerId}: ref is the path's
// customer ID or shop domain; q holds from, to, appId and limit.
func CustomerRequest(ref string, q url.Values, w controlplane.Workspace, now time.Time) (reporting.DetailRequest, error) {
	req := reporting.DetailRequest{Ref: ref}
	var err error
	req.Range, err = reportingRange(q, now)
	if err == nil {
		req.Scope, _, err = coveredApps(q, w)
	}
	if err == nil {
		req.TimelineLimit, err = parseLimit(q, reporting.DefaultTimelineLimit, reporting.MaxTimelineLimit)
	}
	if err == nil {
		err = notApplied(q, "currency", "the analytics carry every currency of the customer")
	}
	if err == nil {
		err = notApplied(q, "customerScope", "a customer is answered whether or not it is excluded (reportExcluded says which)")
	}
	return req, err
}

// reportingRange reads from/to as parseRange does (default: the 30 days ending today) and refuses
// a range that ends after today: the reporting date cannot be in the future (docs/METRICS.md 1.2).
func reportingRange(q url.Values, now time.Time) (reporting.Range, error) {
	r, err := parseRange(q, now)
	if err != nil {
		return reporting.Range{}, err
	}
	from, err1 := reporting.ParseDate(r.From)
	to, err2 := reporting.ParseDate(r.To)
	if err1 != nil || err2 != nil {
		return reporting.Range{}, invalidParam("from and to must be dates YYYY-MM-DD")
	}
	if to.After(reporting.DateOf(now)) {
		return reporting.Range{}, invalidParam("to must not be after today (%s, UTC)", reporting.DateOf(now))
	}
	return reporting.Range{From: from, To: to}, nil
}

// coveredApps is the appId parameter against the workspace's selected apps: every selected app
// when absent, else that one app, which must be selected.
func coveredApps(q url.Values, w controlplane.Workspace) (reporting.Scope, string, error) {
	sc := reporting.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}
	id := q.Get("appId")
	if id == "" {
		return sc, "", nil
	}
	if !slices.Contains(w.SelectedAppIDs, id) {
		return sc, "", invalidParam("appId must be one of the workspace's selected apps")
	}
	sc.AppIDs = []string{id}
	return sc, id, nil
}

var currencyCode = regexp.MustCompile(`^[A-Za-z]{3}$`)

// currencyParam reads currency: three letters, upper-cased; "" for every currency.
func currencyParam(q url.Values) (string, error) {
	cur := q.Get("currency")
	if cur == "" {
		return "", nil
	}
	if !currencyCode.MatchString(cur) {
		return "", invalidParam("currency must be a three-letter currency code such as USD")
	}
	return strings.ToUpper(cur), nil
}

// customerScopeParam reads customerScope: included (default), excluded or all.
func customerScopeParam(q url.Values) (reporting.CustomerScope, error) {
	cs, err := reporting.ParseCustomerScope(q.Get("customerScope"))
	if err != nil {
		return "", invalidParam("customerScope must be one of included, excluded, all")
	}
	return cs, nil
}

// notApplied refuses a filter the endpoint does not apply (400) instead of ignoring it: a caller
// who asked for one currency, say, would otherwise take an unfiltered answer for a filtered one.
// why says what the endpoint does instead.
func notApplied(q url.Values, param, why string) error {
	if q.Has(param) {
		return invalidParam("%s does not apply here: %s", param, why)
	}
	return nil
}
