package partnerfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const eventsQuery = `query Events($id: ID!, $first: Int, $after: String, $types: [AppEventTypes!], $occurredAtMin: DateTime, $occurredAtMax: DateTime) {
  app(id: $id) {
    events(first: $first, after: $after, types: $types, occurredAtMin: $occurredAtMin, occurredAtMax: $occurredAtMax) {
      edges {
        cursor
        node {
          __typename type occurredAt
          shop { id myshopifyDomain name }
          ... on RelationshipUninstalled { reason description }
          ... on AppSubscriptionEvent { charge { id name amount { amount currencyCode } billingOn test } }
          ... on AppPurchaseOneTimeEvent { charge { id name amount { amount currencyCode } test } }
          ... on AppUsageRecordEvent { charge { id name amount { amount currencyCode } test } }
          ... on AppCreditEvent { appCredit { id name amount { amount currencyCode } test } }
        }
      }
      pageInfo { hasNextPage hasPreviousPage }
    }
  }
}`

func TestAuthAndTransportErrors(t *testing.T) {
	s := newTestServer(nil)
	q := map[string]any{"query": "{ publicApiVersions { handle } }"}
	cases := []struct {
		name, path, token string
		body              any
		status            int
		want              string
	}{
		{"wrong token", s.Path("2025-01"), "nope", q, 401, `{"errors":[{"message":"Invalid access token","extensions":{"code":"401"}}]}`},
		{"no token", s.Path("2025-01"), "", q, 401, `{"errors":[{"message":"Invalid access token","extensions":{"code":"401"}}]}`},
		{"wrong organization", "/999/api/2025-01/graphql.json", testToken, q, 401, `{"errors":[{"message":"Invalid access token","extensions":{"code":"401"}}]}`},
		{"unknown version", s.Path("2019-04"), testToken, q, 404, `{"errors":[{"message":"Invalid API version","extensions":{"code":"404"}}]}`},
		{"too long", s.Path("2025-01"), testToken, map[string]any{"query": "{" + strings.Repeat(" ", 50001) + "}"}, 400,
			`{"errors":[{"message":"Maximum query length is 50000 characters","extensions":{"code":"400"}}]}`},
		{"bad path", "/1234567/graphql.json", testToken, q, 404, ""},
	}
	for _, c := range cases {
		r := postAs(t, s, c.path, c.token, c.body)
		if r.status != c.status || c.want != "" && string(r.raw) != c.want {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.raw, c.status, c.want)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: content type %q", c.name, ct)
		}
	}
	req := httptest.NewRequest(http.MethodGet, s.Path("2025-01"), nil)
	req.Header.Set("X-Shopify-Access-Token", testToken)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
	if st := s.Stats(); st.Unauthorized != 3 || st.Served != 0 {
		t.Errorf("stats %+v", st)
	}
}

// walkTransactions pages through transactions with cursors and returns the IDs in order.
func walkTransactions(t *testing.T, s *Server, version string, vars map[string]any) []string {
	t.Helper()
	var ids []string
	var after any
	for page := 0; ; page++ {
		v := map[string]any{"first": 100, "after": after}
		for k, x := range vars {
			v[k] = x
		}
		r := post(t, s, version, transactionsQuery, v)
		if r.status != 200 || len(r.Errors) > 0 {
			t.Fatalf("page %d: %d %s", page, r.status, r.raw)
		}
		edges := dig(r.Data, "transactions", "edges").([]any)
		if len(edges) > 100 {
			t.Fatalf("page of %d edges", len(edges))
		}
		for _, e := range edges {
			ids = append(ids, dig(e, "node", "id").(string))
		}
		if dig(r.Data, "transactions", "pageInfo", "hasNextPage") != true {
			return ids
		}
		if len(edges) == 0 {
			t.Fatal("hasNextPage with an empty page")
		}
		after = dig(edges[len(edges)-1], "cursor") // no endCursor in the Partner PageInfo
	}
}

func TestTransactionsPaginationRoundTrip(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	var all, app1Usage []string
	for tx := range d.Transactions() {
		all = append(all, tx.ID)
		if tx.AppID == d.Apps[1].ID && tx.Typename == "AppUsageSale" {
			app1Usage = append(app1Usage, tx.ID)
		}
	}
	got := walkTransactions(t, s, "2025-07", nil)
	if !slices.Equal(got, all) {
		t.Fatalf("walked %d transactions, dataset has %d (or order differs)", len(got), len(all))
	}
	if again := walkTransactions(t, s, "2025-07", nil); !slices.Equal(again, got) {
		t.Fatal("a second walk differs")
	}
	got = walkTransactions(t, s, "2025-07", map[string]any{"appId": d.Apps[1].ID, "types": []string{"APP_USAGE_SALE"}})
	if !slices.Equal(got, app1Usage) || len(got) == 0 {
		t.Fatalf("filtered walk: %d, want %d", len(got), len(app1Usage))
	}
}

func TestTransactionFieldsMatchTheDataset(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	want := map[string]Transaction{}
	for tx := range d.Transactions() {
		want[tx.ID] = tx
	}
	r := post(t, s, "2025-07", transactionsQuery, map[string]any{"first": 100, "createdAtMin": d.Truth.RevenueShareFrom.Format(time.RFC3339)})
	for _, e := range dig(r.Data, "transactions", "edges").([]any) {
		n := dig(e, "node").(map[string]any)
		tx := want[n["id"].(string)]
		shop := d.Shops[d.Truth.Customers[tx.Customer].ShopIndex]
		exp := map[string]any{
			"__typename": tx.Typename, "id": tx.ID, "createdAt": tx.CreatedAt.Format("2006-01-02T15:04:05Z"), "chargeId": tx.ChargeID,
			"app":         map[string]any{"id": tx.AppID, "name": d.Apps[d.Truth.Customers[tx.Customer].AppIndex].Name},
			"shop":        map[string]any{"id": shop.ID, "myshopifyDomain": shop.Domain, "name": shop.Name},
			"grossAmount": map[string]any{"amount": tx.Gross.String(), "currencyCode": tx.Gross.Currency},
			"shopifyFee":  map[string]any{"amount": tx.ShopifyFee.String(), "currencyCode": tx.Gross.Currency},
			"netAmount":   map[string]any{"amount": tx.Net.String(), "currencyCode": tx.Gross.Currency},
		}
		if tx.BillingInterval != "" {
			exp["billingInterval"] = tx.BillingInterval
		}
		if fmt.Sprint(n) != fmt.Sprint(exp) {
			t.Fatalf("node\n%v\nwant\n%v", n, exp)
		}
	}
}

func TestEventsPaginationRoundTrip(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	for app := range d.Apps {
		var want []string
		for e := range d.Events(app) {
			want = append(want, e.Type+"@"+e.OccurredAt.Format(time.RFC3339)+"@"+e.ShopID)
		}
		var got []string
		var after any
		for {
			r := post(t, s, "2025-07", eventsQuery, map[string]any{"id": d.Apps[app].ID, "first": 250, "after": after})
			if len(r.Errors) > 0 {
				t.Fatalf("%s", r.raw)
			}
			edges := dig(r.Data, "app", "events", "edges").([]any)
			if len(edges) > 100 {
				t.Fatalf("page of %d events exceeds the limit", len(edges))
			}
			for _, e := range edges {
				n := dig(e, "node")
				got = append(got, fmt.Sprint(dig(n, "type"), "@", dig(n, "occurredAt"), "@", dig(n, "shop", "id")))
			}
			if dig(r.Data, "app", "events", "pageInfo", "hasNextPage") != true {
				break
			}
			after = dig(edges[len(edges)-1], "cursor")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("app %d: walked %d events, dataset has %d", app, len(got), len(want))
		}
	}
}

func TestEventPayloads(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	r := post(t, s, "2025-07", eventsQuery, map[string]any{"id": d.Apps[0].ID, "first": 100,
		"types": []string{"RELATIONSHIP_UNINSTALLED", "SUBSCRIPTION_CHARGE_ACTIVATED", "CREDIT_APPLIED", "USAGE_CHARGE_APPLIED"}})
	kinds := map[string]bool{}
	for _, e := range dig(r.Data, "app", "events", "edges").([]any) {
		n := dig(e, "node").(map[string]any)
		kinds[n["__typename"].(string)] = true
		switch n["__typename"] {
		case "RelationshipUninstalled":
			if _, ok := n["reason"]; !ok {
				t.Fatal("uninstall without reason key")
			}
			if _, ok := n["charge"]; ok {
				t.Fatal("uninstall with a charge")
			}
		case "SubscriptionChargeActivated":
			c := n["charge"].(map[string]any)
			if !strings.HasPrefix(c["id"].(string), "gid://shopify/AppSubscription/") || c["billingOn"] == nil {
				t.Fatalf("charge %v", c)
			}
		case "CreditApplied":
			if !strings.HasPrefix(dig(n, "appCredit", "id").(string), "gid://shopify/AppCredit/") {
				t.Fatalf("credit %v", n)
			}
		case "UsageChargeApplied":
			if !strings.HasPrefix(dig(n, "charge", "id").(string), "gid://shopify/AppUsageRecord/") {
				t.Fatalf("usage %v", n)
			}
		default:
			t.Fatalf("types filter let %s through", n["__typename"])
		}
	}
	if len(kinds) != 4 {
		t.Fatalf("saw %v", kinds)
	}
}

func TestPageSizeLimit(t *testing.T) {
	s := newTestServer(nil)
	count := func(args string) (int, any) {
		r := post(t, s, "2025-01", "{ transactions"+args+" { edges { cursor } pageInfo { hasNextPage } } }", nil)
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.raw)
		}
		return len(dig(r.Data, "transactions", "edges").([]any)), dig(r.Data, "transactions", "pageInfo", "hasNextPage")
	}
	if n, _ := count("(first: 500)"); n != 100 {
		t.Errorf("first: 500 gave %d", n)
	}
	if n, _ := count(""); n != 100 {
		t.Errorf("no first gave %d", n)
	}
	if n, more := count("(first: 0)"); n != 0 || more != true {
		t.Errorf("first: 0 gave %d, hasNextPage %v", n, more)
	}
	r := post(t, s, "2025-01", "{ transactions(first: -1) { edges { cursor } } }", nil)
	if len(r.Errors) == 0 || r.Data != nil {
		t.Errorf("first: -1: %s", r.raw)
	}
	s2 := newTestServer(func(c *ServerConfig) { c.MaxPageSize = 7 })
	r = post(t, s2, "2025-01", "{ transactions(first: 50) { edges { cursor } } }", nil)
	if n := len(dig(r.Data, "transactions", "edges").([]any)); n != 7 {
		t.Errorf("MaxPageSize 7 gave %d", n)
	}
}

func TestBackwardPagination(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	var want []string
	for tx := range d.Transactions() {
		if tx.Typename == "AppOneTimeSale" {
			want = append(want, tx.ID)
		}
	}
	var got []string
	var before any
	for {
		r := post(t, s, "2025-01", `query($b: String) { transactions(last: 10, before: $b, types: [APP_ONE_TIME_SALE]) { edges { cursor node { id } } pageInfo { hasPreviousPage } } }`, map[string]any{"b": before})
		edges := dig(r.Data, "transactions", "edges").([]any)
		var page []string
		for _, e := range edges {
			page = append(page, dig(e, "node", "id").(string))
		}
		got = append(page, got...)
		if dig(r.Data, "transactions", "pageInfo", "hasPreviousPage") != true {
			break
		}
		before = dig(edges[0], "cursor")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("backward walk %d, want %d", len(got), len(want))
	}
}

func TestDateWindowsAreInclusive(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	var tx Transaction
	for x := range d.Transactions() {
		if x.CreatedAt.After(d.Truth.Start.AddDate(0, 6, 0)) {
			tx = x
			break
		}
	}
	ts := tx.CreatedAt
	ids := func(min, max time.Time) []string {
		var out []string
		r := post(t, s, "2025-01", `query($min: DateTime, $max: DateTime) { transactions(first: 100, createdAtMin: $min, createdAtMax: $max) { edges { node { id createdAt } } } }`,
			map[string]any{"min": min.Format(time.RFC3339Nano), "max": max.Format(time.RFC3339Nano)})
		for _, e := range dig(r.Data, "transactions", "edges").([]any) {
			out = append(out, dig(e, "node", "id").(string))
			at, _ := time.Parse(time.RFC3339, dig(e, "node", "createdAt").(string))
			if at.Before(min) || at.After(max) {
				t.Fatalf("%s outside [%s, %s]", at, min, max)
			}
		}
		return out
	}
	if !slices.Contains(ids(ts, ts), tx.ID) {
		t.Error("createdAtMin = createdAtMax = createdAt excludes the transaction")
	}
	if slices.Contains(ids(ts.Add(time.Second), ts.Add(time.Hour)), tx.ID) || slices.Contains(ids(ts.Add(-time.Hour), ts.Add(-time.Second)), tx.ID) {
		t.Error("window outside createdAt includes the transaction")
	}
	if slices.Contains(ids(ts.Add(500*time.Millisecond), ts.Add(time.Hour)), tx.ID) {
		t.Error("createdAtMin half a second later includes the transaction")
	}
	// Events: occurredAtMin/Max, same semantics.
	var ev Event
	for e := range d.Events(0) {
		if e.OccurredAt.After(d.Truth.Start.AddDate(0, 6, 0)) {
			ev = e
			break
		}
	}
	at := ev.OccurredAt.Format(time.RFC3339)
	r := post(t, s, "2025-01", eventsQuery, map[string]any{"id": d.Apps[0].ID, "occurredAtMin": at, "occurredAtMax": at})
	edges := dig(r.Data, "app", "events", "edges").([]any)
	if len(edges) == 0 || dig(edges[0], "node", "occurredAt") != at {
		t.Fatalf("occurredAt window [%s, %s]: %s", at, at, r.raw)
	}
	for _, e := range edges {
		if dig(e, "node", "occurredAt") != at {
			t.Fatalf("event at %v outside window", dig(e, "node", "occurredAt"))
		}
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newTestServer(func(c *ServerConfig) {
		c.RequestsPerSecond, c.Burst = 4, 4
		c.Now = func() time.Time { return now }
	})
	q := "{ publicApiVersions { handle } }"
	for i := range 4 {
		if r := post(t, s, "2025-01", q, nil); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := post(t, s, "2025-01", q, nil)
	if r.status != 429 || string(r.raw) != `{"errors":[{"message":"Too many requests","extensions":{"code":"429"}}]}` {
		t.Fatalf("5th request: %d %s", r.status, r.raw)
	}
	if r.header.Get("Retry-After") != "" {
		t.Error("Retry-After sent by default")
	}
	now = now.Add(250 * time.Millisecond) // one token back at 4/s
	if r := post(t, s, "2025-01", q, nil); r.status != 200 {
		t.Fatalf("after 250ms: %d", r.status)
	}
	if r := post(t, s, "2025-01", q, nil); r.status != 429 {
		t.Fatalf("bucket should be empty again: %d", r.status)
	}
	if st := s.Stats(); st.Throttled != 2 || st.Served != 5 {
		t.Fatalf("stats %+v", st)
	}
	s2 := newTestServer(func(c *ServerConfig) {
		c.RequestsPerSecond, c.Burst, c.RetryAfter = 1, 1, 2*time.Second
		c.Now = func() time.Time { return now }
	})
	post(t, s2, "2025-01", q, nil)
	if r := post(t, s2, "2025-01", q, nil); r.status != 429 || r.header.Get("Retry-After") != "2" {
		t.Fatalf("Retry-After: %d %q", r.status, r.header.Get("Retry-After"))
	}
}

func TestScriptedFaults(t *testing.T) {
	s := newTestServer(nil)
	q := "{ transactions(first: 1) { edges { cursor } } }"
	s.Script(Fault{Status: 429, Times: 2}, Fault{Status: 500}, Fault{Status: 503, Match: "events"})
	statuses := []int{}
	for range 5 {
		statuses = append(statuses, post(t, s, "2025-01", q, nil).status)
	}
	// The 503 waits for a request mentioning "events"; transactions requests pass meanwhile.
	if !slices.Equal(statuses, []int{429, 429, 500, 200, 200}) {
		t.Fatalf("statuses %v", statuses)
	}
	r := post(t, s, "2025-01", eventsQuery, map[string]any{"id": testDataset().Apps[0].ID})
	if r.status != 503 || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("events request: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := post(t, s, "2025-01", eventsQuery, map[string]any{"id": testDataset().Apps[0].ID}); r.status != 200 {
		t.Fatalf("after the faults: %d", r.status)
	}
	s.Script(Fault{Status: 200, Body: `{"errors":[{"message":"Internal error"}]}`})
	if r := post(t, s, "2025-01", q, nil); r.status != 200 || r.Errors[0].Message != "Internal error" {
		t.Fatalf("custom body: %s", r.raw)
	}
	s.Script(Fault{Status: 500, Times: 3})
	s.ClearFaults()
	if r := post(t, s, "2025-01", q, nil); r.status != 200 {
		t.Fatal("ClearFaults left a fault")
	}
	if st := s.Stats(); st.Faulted != 5 {
		t.Fatalf("stats %+v", st)
	}
}

func TestHistoryFloor(t *testing.T) {
	d := testDataset()
	floor := d.Truth.Start.AddDate(0, 9, 0)
	s := newTestServer(func(c *ServerConfig) { c.HistoryFloor = floor })
	var oldID string
	var visible []string
	for tx := range d.Transactions() {
		if tx.CreatedAt.Before(floor) {
			oldID = tx.ID
		} else {
			visible = append(visible, tx.ID)
		}
	}
	if got := walkTransactions(t, s, "2025-01", nil); !slices.Equal(got, visible) {
		t.Fatalf("with a floor: %d transactions, want %d", len(got), len(visible))
	}
	// createdAtMin before the floor does not bring truncated history back.
	r := post(t, s, "2025-01", `{ transactions(first: 1, createdAtMin: "2000-01-01T00:00:00Z") { edges { node { createdAt } } } }`, nil)
	if at := dig(r.Data, "transactions", "edges", 0, "node", "createdAt").(string); at < floor.Format(time.RFC3339) {
		t.Fatalf("first transaction %s before the floor %s", at, floor)
	}
	r = post(t, s, "2025-01", `query($id: ID!) { transaction(id: $id) { id } }`, map[string]any{"id": oldID})
	if dig(r.Data, "transaction") != nil {
		t.Fatalf("truncated transaction still readable: %s", r.raw)
	}
	r = post(t, s, "2025-01", eventsQuery, map[string]any{"id": d.Apps[0].ID, "first": 1})
	if at := dig(r.Data, "app", "events", "edges", 0, "node", "occurredAt").(string); at < floor.Format(time.RFC3339) {
		t.Fatalf("first event %s before the floor", at)
	}
	s.SetHistoryFloor(time.Time{})
	if got := walkTransactions(t, s, "2025-01", nil); len(got) != d.NumTransactions() {
		t.Fatal("clearing the floor did not restore history")
	}
}

func TestProcessingFeeOnlyInUnstable(t *testing.T) {
	s := newTestServer(nil)
	q := `{ transactions(first: 50, types: [APP_SUBSCRIPTION_SALE, APP_SALE_CREDIT]) { edges { node { ... on AppSubscriptionSale { grossAmount { amount currencyCode } shopifyFee { amount } processingFee { amount } regulatoryOperatingFee { amount } netAmount { amount } } ... on AppSaleCredit { processingFee { amount } } } } } }`
	r := post(t, s, "unstable", q, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("%s", r.raw)
	}
	for _, e := range dig(r.Data, "transactions", "edges").([]any) {
		n := dig(e, "node").(map[string]any)
		if _, isCredit := n["grossAmount"]; !isCredit {
			if n["processingFee"] != nil {
				t.Fatal("a credit has a processing fee")
			}
			continue
		}
		cur := dig(n, "grossAmount", "currencyCode").(string)
		parse := func(k string) int64 {
			v, ok := ParseAmount(dig(n, k, "amount").(string), cur)
			if !ok {
				t.Fatalf("bad amount %v", n[k])
			}
			return v
		}
		if parse("netAmount") != parse("grossAmount")-parse("shopifyFee")-parse("processingFee") || n["regulatoryOperatingFee"] != nil {
			t.Fatalf("fees do not add up: %v", n)
		}
	}
	r = post(t, s, "2025-07", q, nil)
	if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "undefinedField" || r.Data != nil {
		t.Fatalf("stable version accepted processingFee: %s", r.raw)
	}
}

func TestSelectionSetIsHonoured(t *testing.T) {
	s := newTestServer(nil)
	r := post(t, s, "2025-01", `query Q($skip: Boolean!) {
  tx: transactions(first: 1, types: [APP_SUBSCRIPTION_SALE]) {
    edges { node { kind: __typename ... on AppSubscriptionSale { gross: grossAmount { amount } shop @skip(if: $skip) { id } app @include(if: $skip) { id } } } }
  }
}`, map[string]any{"skip": true})
	if len(r.Errors) > 0 {
		t.Fatalf("%s", r.raw)
	}
	node := dig(r.Data, "tx", "edges", 0, "node").(map[string]any)
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"app", "gross", "kind"}) || node["kind"] != "AppSubscriptionSale" {
		t.Fatalf("node %v", node)
	}
	// Response keys follow the query's order.
	raw := string(r.raw)
	if !(strings.Index(raw, `"kind"`) < strings.Index(raw, `"gross"`) && strings.Index(raw, `"gross"`) < strings.Index(raw, `"app"`)) {
		t.Fatalf("key order: %s", raw)
	}
}

func TestValidationErrors(t *testing.T) {
	s := newTestServer(nil)
	cases := []struct{ query, code, msg string }{
		{`{ transactions { edges { node { grossAmount { amount } } } } }`, "undefinedField", "Field 'grossAmount' doesn't exist on type 'Transaction'"},
		{`{ transactions { edges { node { id createdAt { x } } } } }`, "selectionMismatch", "Selections can't be made on scalars (field 'createdAt' returns DateTime but has selections [x])"},
		{`{ transactions { pageInfo } }`, "selectionMismatch", "Field must have selections (field 'pageInfo' returns PageInfo! but has no selections. Did you mean 'pageInfo { ... }'?)"},
		{`{ transactions(types: [NOPE]) { pageInfo { hasNextPage } } }`, "argumentLiteralsIncompatible", "Argument 'types' on Field 'transactions' has an invalid value ([NOPE]). Expected type '[TransactionType!]'."},
		{`{ transactions(foo: 1) { pageInfo { hasNextPage } } }`, "argumentNotAccepted", "Field 'transactions' doesn't accept argument 'foo'"},
		{`{ app { id } }`, "missingRequiredArguments", "Field 'app' is missing required arguments: id"},
		{`query($n: String) { transactions(first: $n) { pageInfo { hasNextPage } } }`, "variableMismatch", "Type mismatch on variable $n and argument first (String / Int)"},
		{`{ transactions(first: $n) { pageInfo { hasNextPage } } }`, "variableNotDefined", "Variable $n is used by anonymous query but not declared"},
		{`{ transactions { edges { node { ... on Nope { id } } } } }`, "undefinedType", "No such type Nope, so it can't be a fragment condition"},
		{`{ transactions { edges { node { ... on Shop { id } } } } }`, "cannotSpreadFragment", "Fragment on Shop can't be spread inside Transaction"},
		{`{ transactions { edges { node { ...f } } } }`, "useAndDefineFragment", "Fragment f was used, but not defined"},
		{`{ transactions { pageInfo { hasNextPage @cached } } }`, "undefinedDirective", "Directive @cached is not defined"},
	}
	for _, c := range cases {
		r := post(t, s, "2025-01", c.query, nil)
		if r.status != 200 || r.Data != nil || len(r.Errors) == 0 || r.Errors[0].Message != c.msg || r.Errors[0].Extensions["code"] != c.code {
			t.Errorf("%s\n got %s", c.query, r.raw)
		}
	}
	// Parse errors, bad variables, operation selection, mutations.
	other := []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"query": "{ transactions { "}, "Unexpected end of document"},
		{map[string]any{"query": "{ transactions(first: 1) }}"}, `Parse error on "}" (PUNCT) at [1, 27]`},
		{map[string]any{"query": "query($f: Int!) { transactions(first: $f) { pageInfo { hasNextPage } } }", "variables": map[string]any{"f": "ten"}},
			"Variable $f of type Int! was provided invalid value"},
		{map[string]any{"query": "query($f: Int!) { transactions(first: $f) { pageInfo { hasNextPage } } }"}, "Variable $f of type Int! was provided invalid value"},
		{map[string]any{"query": "query A { publicApiVersions { handle } } query B { publicApiVersions { handle } }"}, "An operation name is required"},
		{map[string]any{"query": "query A { publicApiVersions { handle } }", "operationName": "B"}, `No operation named "B"`},
		{map[string]any{"query": `mutation { appCreditCreate { id } }`}, "The fake Partner API serves queries only; mutation operations are not implemented"},
	}
	for _, c := range other {
		r := postAs(t, s, s.Path("2025-01"), testToken, c.body)
		if r.status != 200 || len(r.Errors) == 0 || r.Errors[0].Message != c.msg {
			t.Errorf("%v\n got %s", c.body, r.raw)
		}
	}
	r := postAs(t, s, s.Path("2025-01"), testToken, map[string]any{"query": "query A { a: publicApiVersions { handle } } query B { b: publicApiVersions { handle } }", "operationName": "B"})
	if dig(r.Data, "b") == nil || dig(r.Data, "a") != nil {
		t.Errorf("operationName B: %s", r.raw)
	}
}

func TestInvalidCursorNullsTheConnection(t *testing.T) {
	s := newTestServer(nil)
	r := post(t, s, "2025-01", `{ transactions(first: 1, after: "bm9wZQ==") { edges { cursor } } }`, nil)
	// transactions is non-null, so the error nulls the whole data.
	if r.status != 200 || len(r.Errors) != 1 || r.Errors[0].Message != "Invalid cursor" || !strings.HasPrefix(string(r.raw), `{"data":null,`) {
		t.Fatalf("%s", r.raw)
	}
	if p := fmt.Sprint(r.Errors[0].Path); p != "[transactions]" {
		t.Fatalf("path %s", p)
	}
	// app is nullable: only it becomes null.
	r = post(t, s, "2025-01", `query($id: ID!) { app(id: $id) { name events(after: "x") { edges { cursor } } } }`, map[string]any{"id": testDataset().Apps[0].ID})
	if !strings.HasPrefix(string(r.raw), `{"data":{"app":null},"errors":[{"message":"Invalid cursor"`) {
		t.Fatalf("%s", r.raw)
	}
}

func TestLookups(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	tx := slices.Collect(d.Transactions())[42]
	r := post(t, s, "2025-01", `query($id: ID!, $app: ID!, $none: ID!) { transaction(id: $id) { __typename id createdAt } app(id: $app) { id name apiKey } missing: app(id: $none) { id } publicApiVersions { handle supported } }`,
		map[string]any{"id": tx.ID, "app": d.Apps[2].ID, "none": "gid://partners/App/1"})
	if len(r.Errors) > 0 || dig(r.Data, "transaction", "id") != tx.ID || dig(r.Data, "transaction", "__typename") != tx.Typename ||
		dig(r.Data, "app", "apiKey") != d.Apps[2].APIKey || dig(r.Data, "missing") != nil || dig(r.Data, "publicApiVersions", 0, "handle") != "2024-10" {
		t.Fatalf("%s", r.raw)
	}
	r = post(t, s, "2025-01", `query($shop: ID!, $dom: String!) { byId: transactions(shopId: $shop) { edges { node { id } } } byDomain: transactions(myshopifyDomain: $dom) { edges { node { id } } } }`,
		map[string]any{"shop": tx.ShopID, "dom": d.Shops[d.Truth.Customers[tx.Customer].ShopIndex].Domain})
	a, b := dig(r.Data, "byId", "edges").([]any), dig(r.Data, "byDomain", "edges").([]any)
	if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("shop filters differ: %d vs %d", len(a), len(b))
	}
}

func TestConcurrentClients(t *testing.T) {
	s := newTestServer(nil)
	hs := httptest.NewServer(s)
	defer hs.Close()
	d := testDataset()
	var wg sync.WaitGroup
	errs := make(chan error, len(d.Apps))
	for app := range d.Apps {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"query": eventsQuery, "variables": map[string]any{"id": d.Apps[app].ID, "first": 100}})
			for range 5 {
				req, _ := http.NewRequest(http.MethodPost, hs.URL+s.Path("2025-01"), strings.NewReader(string(body)))
				req.Header.Set("X-Shopify-Access-Token", testToken)
				res, err := hs.Client().Do(req)
				if err != nil {
					errs <- err
					return
				}
				res.Body.Close()
				if res.StatusCode != 200 {
					errs <- fmt.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestClientQueryShapes runs query shapes public Partner API clients send: fragments on every
// Transaction implementation (including types the fake never returns), an alias for the
// non-null shop of ReferralTransaction, literal DateTime arguments without first, and a named
// fragment on the AppEvent interface.
func TestClientQueryShapes(t *testing.T) {
	s := newTestServer(nil)
	d := testDataset()
	queries := []struct {
		q    string
		vars map[string]any
	}{
		{`query ($since: DateTime, $cursor: String, $n: Int) {
  transactions(createdAtMin: $since, after: $cursor, first: $n) {
    edges { cursor node {
      id, createdAt,
      ... on AppSubscriptionSale { netAmount { amount } app { name } shop { myshopifyDomain } billingInterval }
      ... on AppUsageSale { netAmount { amount } app { name } shop { myshopifyDomain } }
      ... on ReferralTransaction { amount { amount } referred: shop { myshopifyDomain } category }
      ... on ReferralAdjustment { amount { amount } shop { myshopifyDomain } }
      ... on ThemeSale { netAmount { amount } theme { name } }
      ... on ServiceSaleAdjustment { netAmount { amount } }
      ... on TaxTransaction { amount { amount } }
      ... on LegacyTransaction { amount { amount } }
    } }
    pageInfo { hasNextPage }
  }
}`, map[string]any{"since": "2024-06-01T00:00:00.000+0000", "n": 50}},
		{`query { transactions(types: [APP_SUBSCRIPTION_SALE], createdAtMin: "2024-06-01T00:00:00Z", createdAtMax: "2024-09-01T00:00:00Z") {
  edges { node { id createdAt ... on AppSubscriptionSale { grossAmount { amount currencyCode } shopifyFee { amount currencyCode } chargeId } } } } }`, nil},
		{`query installs($app: ID!) { app(id: $app) { id events(first: 100, types: [RELATIONSHIP_INSTALLED, RELATIONSHIP_UNINSTALLED]) {
  edges { node { ...lifecycle } cursor } pageInfo { hasNextPage } } } }
fragment lifecycle on AppEvent {
  ... on RelationshipInstalled { shop { id myshopifyDomain avatarUrl name __typename } occurredAt type }
  ... on RelationshipUninstalled { type shop { id myshopifyDomain } reason description }
}`, map[string]any{"app": d.Apps[0].ID}},
	}
	for i, c := range queries {
		r := post(t, s, "2025-01", c.q, c.vars)
		if r.status != 200 || len(r.Errors) > 0 || r.Data == nil {
			t.Errorf("query %d: %s", i, r.raw)
		}
	}
}
