package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
)

// ListCustomersArgs are list_customers' arguments: the REST list's paging and scope.
type ListCustomersArgs struct {
	Limit         int    `json:"limit,omitempty" jsonschema:"minimum=1" jsonschema_description:"Customers per page (the REST API's limit and default apply)."`
	Cursor        string `json:"cursor,omitempty" jsonschema_description:"nextCursor of the previous page, to read the next one. Omit for the first page."`
	AppID         string `json:"appId,omitempty" jsonschema:"minLength=1" jsonschema_description:"Only customers of this selected app. Default: all selected apps."`
	CustomerScope string `json:"customerScope,omitempty" jsonschema:"enum=included,enum=excluded,enum=all" jsonschema_description:"Which customers to list: included (default) leaves out customers the workspace excluded from reporting (its own development stores, partners' stores); excluded lists only those; all lists both."`
	Q             string `json:"q,omitempty" jsonschema:"minLength=1,maxLength=100" jsonschema_description:"Only customers whose shop domain or shop name contains this text, ignoring case (e.g. acme finds acme-store.myshopify.com and Acme Outdoor). At most 100 characters, not only spaces; leading and trailing spaces are dropped."`
	Paying        *bool  `json:"paying,omitempty" jsonschema_description:"true: only customers paying on the reporting date; false: only those not paying. Default: both. A filtered page may hold fewer than limit customers (even none) and still have a nextCursor: keep following nextCursor until it is null."`
	CustomerRangeArgs
}

// CustomerRangeArgs is the range of the customer tools: it sets the reporting date of the computed
// fields and filters nothing.
type CustomerRangeArgs struct {
	From string `json:"from,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"First date of the range, inclusive, as YYYY-MM-DD in UTC. Default: 29 days before to."`
	To   string `json:"to,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"Reporting date, YYYY-MM-DD in UTC, not after today: paying, amrCents, health and the analytics are evaluated on it. It filters no customer. Default: today."`
}

func (a CustomerRangeArgs) values(q url.Values) url.Values {
	set(q, "from", a.From)
	set(q, "to", a.To)
	return q
}

// GetCustomerArgs are get_customer's arguments.
type GetCustomerArgs struct {
	CustomerID string `json:"customerId" jsonschema:"minLength=1" jsonschema_description:"The customer's ID (id in list_customers) or its shop domain (e.g. example.myshopify.com). A domain installed in several apps is ambiguous: the tool then lists the matching IDs to retry with."`
	Limit      int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50" jsonschema_description:"Timeline entries to return, newest first: 1 to 50. Default: 20. Does not affect the analytics."`
	AppID      string `json:"appId,omitempty" jsonschema:"minLength=1" jsonschema_description:"Look the customer up in this selected app only: a shop domain installed in several apps then names one customer."`
	CustomerRangeArgs
}

const listCustomersDescription = "Lists the workspace's customers (one per app install of a shop), ordered by customer ID, one page at a time, " +
	"exactly as the REST endpoint GET /api/v1/customers returns them. Each customer: id, appId, name, domain (shop domain), " +
	"status (install status), paying (billing calculation on the range's last date, independent of install status), " +
	"reportExcluded, amrCents (monthly subscription value, 0 when not paying), ltvByCurrencyCents (lifetime net revenue per currency) " +
	"and, where known, plan, tags, health, firstSeen, lastActive and storeClassification. " +
	"Filter with q (shop domain or name contains, any case) and paying. " +
	"Pass nextCursor back as cursor for the next page; null means the last page (a page filtered by paying may be short or empty before the last). Pages reflect the current synced data, " +
	"so customers can move between pages if a sync lands meanwhile." + moneyNote

const getCustomerDescription = "One customer with its analytics, exactly as the REST endpoint GET /api/v1/customers/{customerId} returns it: " +
	"customer (the list fields), analytics (paying with a human-readable reason; current MRR per currency; the last 30 days' " +
	"gross, fees, net, subscription, usage, one-time and refunds per currency; usage activity; coverage of each history), " +
	"and a timeline of recent events, newest first. Excluded customers are answered too (reportExcluded: true). " +
	"Accepts a customer ID or a shop domain that is unique across the workspace's apps." + moneyNote

func (t *tools) listCustomers() toolDef {
	return newTool(t, "list_customers", "List customers", listCustomersDescription, nil,
		func(ctx context.Context, a ListCustomersArgs) (reporting.CustomerList, error) {
			q := a.CustomerRangeArgs.values(url.Values{})
			if a.Limit != 0 {
				q.Set("limit", strconv.Itoa(a.Limit))
			}
			set(q, "cursor", a.Cursor)
			set(q, "appId", a.AppID)
			set(q, "customerScope", a.CustomerScope)
			if a.Q != "" {
				q.Set("q", a.Q)
			}
			if a.Paying != nil {
				q.Set("paying", strconv.FormatBool(*a.Paying))
			}
			req, err := t.svc.customersRequest(ctx, q)
			if err != nil {
				return reporting.CustomerList{}, err
			}
			return t.svc.customers(ctx, req)
		})
}

func (t *tools) getCustomer() toolDef {
	return newTool(t, "get_customer", "Customer detail", getCustomerDescription, hints{http.StatusNotFound: "Find valid IDs with list_customers."},
		func(ctx context.Context, a GetCustomerArgs) (reporting.CustomerDetail, error) {
			q := a.CustomerRangeArgs.values(url.Values{})
			if a.Limit != 0 {
				q.Set("limit", strconv.Itoa(a.Limit))
			}
			set(q, "appId", a.AppID)
			req, err := t.svc.customerRequest(ctx, a.CustomerID, q)
			if err != nil {
				return reporting.CustomerDetail{}, err
			}
			out, err := t.svc.customer(ctx, req)
			return out, ambiguousCustomer(a.CustomerID, err)
		})
}

// ambiguousCustomer rewrites the 409 of a shop domain installed in several apps into a tool error
// that lists the matching IDs (those of REST's 409 body), so the model can retry with one of them.
func ambiguousCustomer(id string, err error) error {
	var ambiguous *reporting.AmbiguousError
	if !errors.As(err, &ambiguous) {
		return err
	}
	r := query.ReplyOf(err)
	if len(r.CustomerIDs) == 0 {
		return err
	}
	return &actionable{cause: err, msg: fmt.Sprintf("The shop domain %q has customers in several apps: %s. "+
		"Call get_customer again with one of these customer IDs. [HTTP %d %s]", id, strings.Join(r.CustomerIDs, ", "), r.Status, r.Code)}
}
