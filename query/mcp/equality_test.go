package mcp_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	querymcp "github.com/revtrack/revtrack/query/mcp"
)

// eqCase is one tool call and the REST answer it must equal.
type eqCase struct {
	name string
	tool string
	args map[string]any
	// rest is the REST path with its query for tools that answer one REST body; check replaces it
	// for composed tools.
	rest  string
	check func(t *testing.T, text string)
	// wantError: the REST answer is an error; the tool must answer a tool error that carries its
	// message and status.
	wantError bool
}

// testEquality calls every tool through mcp-go's client in both protocol eras and through the
// TypeScript SDK, and checks each answer against the REST responses for the same inputs.
func testEquality(t *testing.T, st stack) {
	today := time.Now().UTC()
	day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
	app0 := st.dataset.Apps[0].ID
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}

	// Customers to ask about: the first of the list, a domain with one customer, one with several.
	status, body := st.rest(t, "/api/v1/customers?limit=200&customerScope=all", st.apiKey)
	var list struct {
		Customers []struct{ ID, Domain, AppID string }
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil || len(list.Customers) == 0 {
		t.Fatalf("customer list: %d %s", status, body)
	}
	perDomain := map[string]int{}
	for _, c := range list.Customers {
		perDomain[c.Domain]++
	}
	var uniqueDomain, sharedDomain string
	for d, n := range perDomain {
		if n == 1 && uniqueDomain == "" {
			uniqueDomain = d
		}
		if n > 1 && sharedDomain == "" {
			sharedDomain = d
		}
	}
	if uniqueDomain == "" || sharedDomain == "" {
		t.Fatalf("the data set needs a domain in one app and one in several: %v", perDomain)
	}
	customerID := list.Customers[0].ID
	var sharedApp string
	for _, c := range list.Customers {
		if c.Domain == sharedDomain {
			sharedApp = c.AppID
			break
		}
	}

	cases := []eqCase{
		{name: "summary, defaults", tool: "get_summary", args: map[string]any{}, rest: "/api/v1/summary"},
		{name: "summary, range, currency, scope", tool: "get_summary",
			args: map[string]any{"from": day(-60), "to": day(-1), "currency": "USD", "customerScope": "all"},
			rest: "/api/v1/summary?" + q("from", day(-60), "to", day(-1), "currency", "USD", "customerScope", "all")},
		{name: "summary, one app", tool: "get_summary", args: map[string]any{"appId": app0, "customerScope": "excluded"},
			rest: "/api/v1/summary?" + q("appId", app0, "customerScope", "excluded")},
		{name: "net revenue retention", tool: "get_report", args: map[string]any{"report": "net-revenue-retention", "from": day(-45), "to": day(-15)},
			rest: "/api/v1/metrics/net-revenue-retention?" + q("from", day(-45), "to", day(-15))},
		{name: "customer concentration", tool: "get_report", args: map[string]any{"report": "customer-concentration", "currency": "EUR"},
			rest: "/api/v1/metrics/customer-concentration?" + q("currency", "EUR")},
		{name: "customers, first page", tool: "list_customers", args: map[string]any{"limit": 5}, rest: "/api/v1/customers?limit=5"},
		{name: "customers, one app, all scopes", tool: "list_customers", args: map[string]any{"appId": app0, "customerScope": "all", "to": day(-7)},
			rest: "/api/v1/customers?" + q("appId", app0, "customerScope", "all", "to", day(-7))},
		{name: "customers, searched by domain in upper case, paying", tool: "list_customers",
			args: map[string]any{"q": strings.ToUpper(uniqueDomain[:3]), "paying": true, "limit": 2, "customerScope": "all"},
			rest: "/api/v1/customers?" + q("q", strings.ToUpper(uniqueDomain[:3]), "paying", "true", "limit", "2", "customerScope", "all")},
		{name: "customers not paying", tool: "list_customers", args: map[string]any{"paying": false, "limit": 3},
			rest: "/api/v1/customers?" + q("paying", "false", "limit", "3")},
		{name: "customer by ID", tool: "get_customer", args: map[string]any{"customerId": customerID, "to": day(-1), "limit": 3},
			rest: "/api/v1/customers/" + customerID + "?" + q("to", day(-1), "limit", "3")},
		{name: "customer by unique domain", tool: "get_customer", args: map[string]any{"customerId": uniqueDomain},
			rest: "/api/v1/customers/" + uniqueDomain},
		{name: "a shared domain in one app", tool: "get_customer", args: map[string]any{"customerId": sharedDomain, "appId": sharedApp},
			rest: "/api/v1/customers/" + sharedDomain + "?" + q("appId", sharedApp)},
		{name: "metrics, whole range", tool: "query_metrics",
			args: map[string]any{"metrics": querymcp.Metrics, "from": day(-30), "to": day(-1)},
			check: func(t *testing.T, text string) {
				checkSeries(t, st, text, querymcp.Metrics, q("from", day(-30), "to", day(-1)))
			}},
		{name: "metrics, weekly series", tool: "query_metrics",
			args: map[string]any{"metrics": []string{"mrr", "usage"}, "interval": "week", "from": day(-20), "to": day(-1), "currency": "USD"},
			check: func(t *testing.T, text string) {
				checkSeries(t, st, text, []string{"mrr", "usage"}, q("currency", "USD"))
			}},
		{name: "metrics, monthly series with the default range", tool: "query_metrics",
			args:  map[string]any{"metrics": []string{"arr"}, "interval": "month"},
			check: func(t *testing.T, text string) { checkSeries(t, st, text, []string{"arr"}, "") }},
		{name: "compare with the previous period", tool: "compare_periods", args: map[string]any{"current": map[string]any{"from": day(-29), "to": day(0)}},
			check: func(t *testing.T, text string) {
				checkCompare(t, st, text, q("from", day(-29), "to", day(0)), q("from", day(-59), "to", day(-30)))
			}},
		{name: "compare two given periods, one app", tool: "compare_periods",
			args: map[string]any{"current": map[string]any{"from": day(-10), "to": day(-1)}, "previous": map[string]any{"from": day(-70), "to": day(-40)}, "appId": app0},
			check: func(t *testing.T, text string) {
				checkCompare(t, st, text, q("from", day(-10), "to", day(-1), "appId", app0), q("from", day(-70), "to", day(-40), "appId", app0))
			}},
		{name: "attribution by campaign", tool: "get_attribution", args: map[string]any{"groupBy": "utm_campaign"},
			rest: "/api/v1/attribution?groupBy=utm_campaign"},
		{name: "attribution by click ID, one app, one currency", tool: "get_attribution",
			args: map[string]any{"groupBy": "click_id_type", "appId": app0, "currency": "USD", "from": day(-60), "to": day(-1)},
			rest: "/api/v1/attribution?" + q("groupBy", "click_id_type", "appId", app0, "currency", "USD", "from", day(-60), "to", day(-1))},
		{name: "MRR movements, monthly", tool: "get_mrr_movements", args: map[string]any{"from": day(-80), "to": day(-1)},
			rest: "/api/v1/mrr-movements?" + q("from", day(-80), "to", day(-1))},
		{name: "MRR movements, weekly, one app, all scopes", tool: "get_mrr_movements",
			args: map[string]any{"interval": "week", "appId": app0, "customerScope": "all"},
			rest: "/api/v1/mrr-movements?" + q("interval", "week", "appId", app0, "customerScope", "all")},
		{name: "the customers behind new MRR", tool: "list_mrr_movement_customers",
			args: map[string]any{"type": "new", "period": day(-1), "from": day(-80), "to": day(-1), "limit": 3},
			rest: "/api/v1/mrr-movements/customers?" + q("type", "new", "period", day(-1), "from", day(-80), "to", day(-1), "limit", "3")},
		{name: "cohorts by install", tool: "get_cohorts", args: map[string]any{"from": day(-120), "to": day(-1)},
			rest: "/api/v1/cohorts?" + q("from", day(-120), "to", day(-1))},
		{name: "cohorts by first payment, one app, one currency", tool: "get_cohorts",
			args: map[string]any{"by": "first_paid", "appId": app0, "currency": "USD"},
			rest: "/api/v1/cohorts?" + q("by", "first_paid", "appId", app0, "currency", "USD")},
		{name: "a date in the future", tool: "get_summary", args: map[string]any{"to": day(1)}, rest: "/api/v1/summary?" + q("to", day(1)), wantError: true},
		{name: "from after to", tool: "get_report", args: map[string]any{"report": "net-revenue-retention", "from": day(-1), "to": day(-2)},
			rest: "/api/v1/metrics/net-revenue-retention?" + q("from", day(-1), "to", day(-2)), wantError: true},
		{name: "an app that is not selected", tool: "get_summary", args: map[string]any{"appId": "gid://partners/App/999"},
			rest: "/api/v1/summary?" + q("appId", "gid://partners/App/999"), wantError: true},
		{name: "attribution of an app that is not selected", tool: "get_attribution", args: map[string]any{"groupBy": "utm_source", "appId": "gid://partners/App/999"},
			rest: "/api/v1/attribution?" + q("groupBy", "utm_source", "appId", "gid://partners/App/999"), wantError: true},
		{name: "movement customers of a period outside the range", tool: "list_mrr_movement_customers",
			args: map[string]any{"type": "churn", "period": day(-40)}, rest: "/api/v1/mrr-movements/customers?" + q("type", "churn", "period", day(-40)), wantError: true},
		{name: "a blank search", tool: "list_customers", args: map[string]any{"q": "   "},
			rest: "/api/v1/customers?" + q("q", "   "), wantError: true},
		{name: "an unknown customer", tool: "get_customer", args: map[string]any{"customerId": "cus_00000000000000000000"},
			rest: "/api/v1/customers/cus_00000000000000000000", wantError: true},
		{name: "an ambiguous domain", tool: "get_customer", args: map[string]any{"customerId": sharedDomain},
			rest: "/api/v1/customers/" + sharedDomain, wantError: true},
	}

	modern, err := querymcp.Dial(ctx(t), st.base, st.apiKey, "")
	if err != nil {
		t.Fatal(err)
	}
	defer modern.Close()
	legacy, _, err := goClient(t, st.mcpURL(), st.trackerKey, mcp.ProtocolVersion20251125)
	if err != nil {
		t.Fatal(err)
	}
	var plan []tsCall
	for _, c := range cases {
		plan = append(plan, tsCall{Name: c.tool, Arguments: c.args})
	}
	ts := runTS(t, st.mcpURL(), st.apiKey, plan)
	if !ts.Connected || len(ts.Results) != len(cases) {
		t.Fatalf("TypeScript client: %+v", ts.Error)
	}
	// The TypeScript SDK speaks the session era: initialize, then a session ID on every request.
	var tsTools []string
	for _, raw := range ts.Tools {
		var tool struct{ Name string }
		_ = json.Unmarshal(raw, &tool)
		tsTools = append(tsTools, tool.Name)
	}
	if ts.ProtocolVersion != mcp.ProtocolVersion20251125 || ts.SessionID == "" || ts.ServerVersion.Name != querymcp.ServerName ||
		!reflect.DeepEqual(tsTools, toolNames) || !strings.Contains(ts.Instructions, "Cents") {
		t.Errorf("TypeScript client: protocol %q, session %q, server %+v, tools %v", ts.ProtocolVersion, ts.SessionID, ts.ServerVersion, tsTools)
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]callResult{"TypeScript SDK": {IsError: ts.Results[i].IsError, Text: ts.Results[i].Text}}
			text, err := modern.Call(ctx(t), c.tool, c.args)
			answers["mcp-go, 2026-07-28"] = callResult{IsError: err != nil, Text: string(text)}
			if err != nil {
				answers["mcp-go, 2026-07-28"] = callResult{IsError: true, Text: strings.TrimPrefix(err.Error(), querymcp.ErrTool.Error()+": "+c.tool+": ")}
			}
			answers["mcp-go, 2025-11-25, tracking private key"] = callGo(t, legacy, c.tool, c.args)
			for client, a := range answers {
				t.Logf("%s: %.300s", client, a.Text)
				switch {
				case c.wantError:
					checkToolError(t, st, client, c, a)
				case a.IsError:
					t.Errorf("%s: tool error %s", client, a.Text)
				case c.check != nil:
					c.check(t, a.Text)
				default:
					status, body := st.rest(t, c.rest, st.apiKey)
					if status != 200 {
						t.Fatalf("REST %s: %d %s", c.rest, status, body)
					}
					if got, want := normalize(t, []byte(a.Text)), normalize(t, body); got != want {
						t.Errorf("%s differs from REST %s:\n%s\n%s", client, c.rest, got, want)
					}
				}
			}
		})
	}
}

// checkToolError: the REST call fails, and the tool error carries REST's message, status and code.
func checkToolError(t *testing.T, st stack, client string, c eqCase, a callResult) {
	t.Helper()
	status, body := st.rest(t, c.rest, st.apiKey)
	var e struct {
		Error, Message string
		CustomerIDs    []string
	}
	if err := json.Unmarshal(body, &e); err != nil || status < 400 {
		t.Fatalf("REST %s: %d %s, want an error", c.rest, status, body)
	}
	if !a.IsError || !strings.Contains(a.Text, fmt.Sprintf("[HTTP %d %s]", status, e.Error)) {
		t.Errorf("%s: %+v, want a tool error for REST's %d %s", client, a, status, body)
	}
	if status == 409 {
		for _, id := range e.CustomerIDs {
			if !strings.Contains(a.Text, id) {
				t.Errorf("%s: the 409 tool error must list %s: %s", client, id, a.Text)
			}
		}
		return
	}
	if !strings.Contains(a.Text, strings.TrimSuffix(e.Message, ".")) {
		t.Errorf("%s: the tool error must carry REST's message %q: %s", client, e.Message, a.Text)
	}
}

// checkSeries: each point of a query_metrics answer is the REST metric for the point's range.
func checkSeries(t *testing.T, st stack, text string, metrics []string, extra string) {
	t.Helper()
	var r struct {
		Range    struct{ From, To string }
		Interval string
		Metrics  []string
		Points   []struct {
			Range   struct{ From, To string }
			Results map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if !reflect.DeepEqual(r.Metrics, metrics) || len(r.Points) == 0 || r.Points[0].Range.From != r.Range.From ||
		r.Points[len(r.Points)-1].Range.To != r.Range.To {
		t.Errorf("series %+v", r)
	}
	for _, p := range r.Points {
		for _, m := range metrics {
			v, _ := url.ParseQuery(extra)
			v.Set("from", p.Range.From)
			v.Set("to", p.Range.To)
			path := "/api/v1/metrics/" + m + "?" + v.Encode()
			status, body := st.rest(t, path, st.apiKey)
			if status != 200 {
				t.Fatalf("REST %s: %d %s", path, status, body)
			}
			if got, want := normalize(t, p.Results[m]), normalize(t, body); got != want {
				t.Errorf("point %v %s differs from REST:\n%s\n%s", p.Range, m, got, want)
			}
		}
	}
}

// checkCompare: compare_periods' answer is the comparison of the two REST summaries.
func checkCompare(t *testing.T, st stack, text, cur, prev string) {
	t.Helper()
	var bodies [2][]byte
	for i, qs := range []string{cur, prev} {
		status, body := st.rest(t, "/api/v1/summary?"+qs, st.apiKey)
		if status != 200 {
			t.Fatalf("REST summary %s: %d %s", qs, status, body)
		}
		bodies[i] = body
	}
	want, err := querymcp.CompareSummaries(bodies[0], bodies[1])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normalize(t, []byte(text)), normalize(t, want); got != want {
		t.Errorf("compare_periods differs from the REST summaries compared:\n%s\n%s", got, want)
	}
}

// normalize re-encodes JSON without the instants that say when a response was built: generatedAt,
// and the customer analytics' asOf, which is the response time when the reporting date is today.
func normalize(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %.500s", err, b)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "generatedAt")
			if a, ok := x["analytics"].(map[string]any); ok {
				delete(a, "asOf")
			}
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}
