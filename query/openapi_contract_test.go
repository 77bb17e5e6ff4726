package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestOpenAPIContractFuzz holds the description to what the server enforces (docs/API.md "How it
// is kept true"). For every parameter of every GET operation it generates values (each enum value
// and others, the bounds of a range and beyond, dates and non-dates, IDs the workspace holds and
// junk), lets the description say which requests are schema-valid (kin-openapi's request
// validation), sends each to `revtrack all` and checks that no schema-valid request is refused
// with 400 and no schema-violating one is accepted (2xx). Admin request bodies get the same
// treatment, from mutations of a valid body (required members dropped, enums, patterns, bounds and
// types broken, unknown members added). A rule the server enforces that a schema cannot state
// (cross-parameter, workspace state, the clock) excuses a refusal only by name, and only with the
// message that rule answers; the test logs which ones it used.
func TestOpenAPIContractFuzz(t *testing.T) {
	e := startContractEnv(t)
	doc := loadDoc(t)
	doc.Servers = openapi3.Servers{{URL: e.base}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	f := &fuzzer{e: e, doc: doc, router: router, excused: map[string]int{}}
	f.values = f.workspaceValues(t)

	t.Run("GET parameters", func(t *testing.T) {
		for _, path := range sortedPaths(doc) {
			op := doc.Paths.Value(path).Get
			if op == nil {
				continue
			}
			if why, skip := skippedOperations["GET "+path]; skip {
				t.Logf("GET %s not fuzzed: %s", path, why)
				continue
			}
			f.fuzzParameters(t, path, op)
		}
	})
	t.Run("admin bodies", func(t *testing.T) {
		for _, path := range sortedPaths(doc) {
			if !strings.HasPrefix(path, "/api/admin/") {
				continue
			}
			for _, method := range []string{"POST", "PUT", "PATCH"} {
				op := doc.Paths.Value(path).GetOperation(method)
				if op == nil || op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
					continue
				}
				key := method + " " + path
				if why, skip := skippedOperations[key]; skip {
					t.Logf("%s not fuzzed: %s", key, why)
					continue
				}
				base, ok := f.bodies()[key]
				if !ok {
					t.Errorf("%s: no valid body to mutate; add one to fuzzer.bodies", key)
					continue
				}
				f.fuzzBody(t, method, path, op, base)
			}
		}
	})
	t.Logf("%d requests: %d schema-valid, %d schema-violating", f.sent, f.valid, f.sent-f.valid)
	for _, x := range exclusions {
		if f.excused[x.name] == 0 {
			t.Errorf("the exclusion %q excused nothing: the server or the description changed; remove it", x.name)
		} else {
			t.Logf("excused %d× by: %s", f.excused[x.name], x.name)
		}
	}
}

// skippedOperations are operations the fuzzer leaves out, with the reason.
var skippedOperations = map[string]string{
	"GET /api/admin/ads/oauth/begin":    "the browser's leg of the Google connection: its only parameter is a single-use link the server issued",
	"GET /api/admin/ads/oauth/callback": "the browser's leg of the Google connection: Google's redirect, with a single-use state the server issued",
	"POST /api/admin/ads/oauth/confirm": "the browser's leg of the Google connection: needs the flow's cookie and CSRF token",
	// Console sign-in (openapi_people_test.go runs each of these with a valid and refused bodies).
	"POST /api/admin/session":                  "sign-in: failures are throttled per client address, so mutated bodies would lock the run out",
	"POST /api/admin/invitations/accept":       "its only valid body carries a single-use token the server issued",
	"POST /api/admin/password-resets/complete": "its only valid body carries a single-use token the server issued",
	"PUT /api/admin/account":                   "needs a session cookie and its CSRF token, not a key",
	"PUT /api/admin/account/password":          "needs a session cookie and its CSRF token, not a key",
	"PUT /api/admin/members/{userId}":          "its path names a member the run would have to create first",
	"POST /api/admin/invitations":              "the address must be an e-mail address (format: email, which the request validator does not check)",
	"POST /api/admin/password-resets":          "the address must be a member's (workspace state)",
}

// exclusion is a rule the server enforces that the description cannot state as a schema. It
// excuses a 400 for a schema-valid request (or, with accepted, a 2xx for a schema-violating one)
// when the request varied one of params and the answer's message contains message.
type exclusion struct {
	name     string
	params   []string // the parameter or body member varied; empty: any
	message  string   // a part of the refusal's message; "" with accepted
	value    func(v string) bool
	accepted bool
}

var exclusions = []exclusion{
	{name: "the range spans at most 366 days from `from` to `to` (cross-parameter: a lone `from` is measured against the default `to`, today)",
		params: []string{"from", "to"}, message: "the range may span at most"},
	{name: "`from` is not after `to` (cross-parameter: a lone `to` is measured against the default `from`)",
		params: []string{"from", "to"}, message: "from must not be after to"},
	{name: "on the reporting routes `to` is not after today (the server's clock)",
		params: []string{"to"}, message: "to must not be after today"},
	{name: "a day that does not exist in its month (2026-02-30) matches the date format and pattern",
		params: []string{"from", "to"}, value: notACalendarDate},
	{name: "appId names one of the workspace's selected apps (workspace state)",
		params: []string{"appId"}, message: "selected app"},
	{name: "a cursor is opaque: only a nextCursor the server issued pages on",
		params: []string{"cursor"}, message: "cursor"},
	{name: "fixedValueCents comes with fixedCurrency, or neither (cross-member)",
		params: []string{"fixedValueCents", "fixedCurrency"}, message: "fixed value and currency go together"},
	{name: "sourceId names a tracking source of the workspace (workspace state)",
		params: []string{"sourceId"}, message: "is not a source of this workspace"},
	{name: "a shop domain is checked after a pasted scheme, path, case and trailing dot are dropped (stated in its description, not a pattern)",
		params: []string{"shopDomain"}, message: "want the shop's platform domain"},
	{name: "an empty query parameter is the parameter's absence (docs/API.md \"Errors\"); OpenAPI 3.0 could say so only with the deprecated allowEmptyValue",
		value: func(v string) bool { return v == "" }, accepted: true},
}

func notACalendarDate(v string) bool {
	if len(v) < 10 {
		return false
	}
	_, err := time.Parse(time.DateOnly, v[:10])
	return err != nil
}

func (x exclusion) excuses(param, value, message string, accepted bool) bool {
	if x.accepted != accepted || (len(x.params) > 0 && !slices.Contains(x.params, param)) {
		return false
	}
	if x.value != nil && !x.value(value) {
		return false
	}
	return x.message == "" || strings.Contains(message, x.message)
}

type fuzzer struct {
	e       contractEnv
	doc     *openapi3.T
	router  routers.Router
	values  map[string][]string // values the workspace holds, by parameter name
	excused map[string]int
	sent    int
	valid   int
	keyN    int
}

// workspaceValues are parameter values that name something of the seeded workspace, so that the
// schema-valid requests also reach the paths behind the lookups.
func (f *fuzzer) workspaceValues(t *testing.T) map[string][]string {
	t.Helper()
	p := f.e.platform
	v := map[string][]string{
		"appId":         {"app-1", "app-2"},
		"sourceId":      {f.e.sourceID},
		"id":            {f.e.sourceID},
		"customerId":    {p.alphaID, p.alphaDomain},
		"acquisitionId": {"acq-contract"},
		"currency":      {"USD", "eur"},
		"metric":        {"mrr"},
	}
	// A cursor the server issued.
	status, body := f.send(t, http.MethodGet, "/api/v1/customers?limit=1", f.newKey(t), nil)
	var page struct{ NextCursor *string }
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil || page.NextCursor == nil {
		t.Fatalf("no first page of customers: %d %s", status, body)
	}
	v["cursor"] = []string{*page.NextCursor}
	return v
}

// newKey is a fresh admin-scoped workspace key: each operation gets its own reporting budget.
func (f *fuzzer) newKey(t *testing.T) string {
	t.Helper()
	f.keyN++
	status, body := f.send(t, http.MethodPost, "/api/admin/keys", f.e.admin, map[string]any{"name": fmt.Sprintf("fuzz %d", f.keyN), "scope": "admin"})
	var r struct{ Value string }
	if status != http.StatusCreated || json.Unmarshal(body, &r) != nil || r.Value == "" {
		t.Fatalf("create a key: %d %s", status, body)
	}
	return r.Value
}

func (f *fuzzer) send(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	req := f.request(t, method, path, key, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (f *fuzzer) request(t *testing.T, method, path, key string, body any) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(testenv.Ctx(t), method, f.e.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}

// schemaValid asks the description whether the request is one it allows (authentication aside).
func (f *fuzzer) schemaValid(ctx context.Context, method, path string, body any) (bool, string) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.e.base+path, rd)
	if err != nil {
		return false, err.Error()
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, err := f.router.FindRoute(req)
	if err != nil {
		return false, "no described route: " + err.Error()
	}
	err = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}})
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

// check sends one request and holds its answer to the description's verdict.
func (f *fuzzer) check(t *testing.T, method, path, key, param, value string, body any) {
	t.Helper()
	valid, why := f.schemaValid(testenv.Ctx(t), method, path, body)
	status, resp := f.send(t, method, path, key, body)
	f.sent++
	if valid {
		f.valid++
	}
	var answer struct{ Error, Message string }
	_ = json.Unmarshal(resp, &answer)
	where := fmt.Sprintf("%s %s", method, path)
	if body != nil {
		b, _ := json.Marshal(body)
		where += " " + string(b)
	}
	// Every refusal speaks the API's one vocabulary, on one line (docs/API.md "Errors").
	if status >= 400 {
		e, ok := apierror.Lookup(answer.Error)
		switch {
		case !ok:
			t.Errorf("%s: %d with code %q, not one of the list: %s", where, status, answer.Error, resp)
		case e.Status != status:
			t.Errorf("%s: %s answered with %d, the list says %d", where, answer.Error, status, e.Status)
		case answer.Message == "" || strings.ContainsAny(answer.Message, "\r\n"):
			t.Errorf("%s: the message is not one line: %q", where, answer.Message)
		}
	}
	switch {
	case status >= 500:
		t.Errorf("%s: the server failed: %d %s", where, status, resp)
	case valid && status == http.StatusBadRequest:
		if !f.excuse(param, value, answer.Message, false) {
			t.Errorf("%s: schema-valid but refused: %d %s", where, status, resp)
		}
	case !valid && status < 300:
		if !f.excuse(param, value, answer.Message, true) {
			t.Errorf("%s: schema-violating (%s) but accepted: %d %s", where, why, status, resp)
		}
	}
}

func (f *fuzzer) excuse(param, value, message string, accepted bool) bool {
	for _, x := range exclusions {
		if x.excuses(param, value, message, accepted) {
			f.excused[x.name]++
			return true
		}
	}
	return false
}

// fuzzParameters varies each parameter of a GET operation alone, the others absent (path
// parameters at a value the workspace holds).
func (f *fuzzer) fuzzParameters(t *testing.T, path string, op *openapi3.Operation) {
	params := append(slices.Clone(f.doc.Paths.Value(path).Parameters), op.Parameters...)
	key := f.newKey(t)
	fill := func(name, value string) string {
		out := path
		for _, p := range params {
			if p.Value.In != openapi3.ParameterInPath {
				continue
			}
			v := "x"
			if vs := f.values[p.Value.Name]; len(vs) > 0 {
				v = vs[0]
			}
			if p.Value.Name == name {
				v = value
			}
			out = strings.ReplaceAll(out, "{"+p.Value.Name+"}", url.PathEscape(v))
		}
		return out
	}
	f.check(t, http.MethodGet, fill("", ""), key, "", "", nil)
	for _, p := range params {
		for _, v := range f.candidates(p.Value) {
			switch p.Value.In {
			case openapi3.ParameterInPath:
				if v == "" || strings.Contains(v, "/") {
					continue
				}
				f.check(t, http.MethodGet, fill(p.Value.Name, v), key, p.Value.Name, v, nil)
			case openapi3.ParameterInQuery:
				f.check(t, http.MethodGet, fill("", "")+"?"+url.Values{p.Value.Name: {v}}.Encode(), key, p.Value.Name, v, nil)
			}
		}
	}
}

// candidates are the values tried for a parameter: from its schema (enum members and near
// misses, the bounds of a range and beyond, dates and non-dates), the workspace's own values, and
// junk every parameter gets.
func (f *fuzzer) candidates(p *openapi3.Parameter) []string {
	s := p.Schema.Value
	vals := []string{"", "x", "0", "-1", "1.5", "abc def", "true", strings.Repeat("a", 300)}
	for _, v := range s.Enum {
		vals = append(vals, fmt.Sprint(v), strings.ToUpper(fmt.Sprint(v)), fmt.Sprint(v)+"x")
	}
	if s.Type.Is("integer") {
		lo, hi := 1.0, 1000.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		}
		for _, n := range []float64{lo, hi, lo - 1, hi + 1, float64(int((lo + hi) / 2))} {
			vals = append(vals, strconv.FormatFloat(n, 'f', -1, 64))
		}
		vals = append(vals, "1e2", "5x", " 5", "+5", "05")
		if s.Default != nil {
			vals = append(vals, fmt.Sprint(s.Default))
		}
	}
	if s.Type.Is("boolean") {
		vals = append(vals, "false", "1", "TRUE", "maybe", "yes")
	}
	today := time.Now().UTC()
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	if s.Format == "date" || s.Pattern != "" {
		vals = append(vals, day(0), day(-30), day(-366), day(-367), day(1), "2024-02-29", "2026-02-30", "2026-13-01",
			"2026-1-5", "yesterday", "20260101", "2026-01-05T10:00:00Z", "2026-01-05T10:00:00.5+02:00", "2026-01-05T25:00:00Z",
			"2026-01-05T10:00:00", "2026-01-05Tnoon", "USD", "usd", "US", "USDX", "U5D", "1234", "12a")
	}
	vals = append(vals, f.values[p.Name]...)
	slices.Sort(vals)
	return slices.Compact(vals)
}

// bodies are valid bodies of the admin operations, and the path each is sent to.
func (f *fuzzer) bodies() map[string]bodyBase {
	return map[string]bodyBase{
		"POST /api/admin/sources": {path: "/api/admin/sources",
			body: map[string]any{"appId": "app-1", "name": "Fuzz", "allowedOrigins": []any{"https://fuzz.example"}}},
		"PATCH /api/admin/sources/{id}": {path: "/api/admin/sources/" + f.e.sourceID,
			body: map[string]any{"enabled": true, "allowedOrigins": []any{"https://app.example"}}},
		"POST /api/admin/keys": {path: "/api/admin/keys", body: map[string]any{"name": "fuzz", "scope": "read"}},
		"POST /api/admin/customer-exclusions": {path: "/api/admin/customer-exclusions",
			body: map[string]any{"shopDomain": "fuzz.example", "appId": "app-1", "reason": "fuzz"}},
		"PUT /api/admin/partner-connection": {path: "/api/admin/partner-connection",
			body: map[string]any{"organizationId": "1234", "accessToken": "prtapi_fuzz"}},
		"POST /api/admin/sync-runs": {path: "/api/admin/sync-runs", body: map[string]any{"appId": "app-1"}},
		"PUT /api/admin/ads/connection/account": {path: "/api/admin/ads/connection/account",
			body: map[string]any{"conversionCustomerId": "1234567890", "loginCustomerId": "9876543210"}},
		"POST /api/admin/ads/mappings": {path: "/api/admin/ads/mappings",
			body: map[string]any{"sourceId": f.e.sourceID, "milestone": "paid", "conversionActionId": "7723667020",
				"conversionActionName": "Purchase", "consentConfirmed": true, "validationOnly": true, "fixedValueCents": 1000,
				"fixedCurrency": "USD"}},
		"PATCH /api/admin/ads/mappings/{id}": {path: "/api/admin/ads/mappings/map_fuzz",
			body: map[string]any{"validationOnly": false, "conversionActionId": "7723667020", "conversionActionName": "Purchase",
				"fixedValueCents": 1000, "fixedCurrency": "USD", "consentConfirmed": true, "enabled": true}},
	}
}

type bodyBase struct {
	path string
	body map[string]any
}

// fuzzBody sends the valid body and its mutations.
func (f *fuzzer) fuzzBody(t *testing.T, method, path string, op *openapi3.Operation, base bodyBase) {
	s := op.RequestBody.Value.Content.Get("application/json").Schema.Value
	key := f.newKey(t)
	f.check(t, method, base.path, key, "", "", base.body)
	f.check(t, method, base.path, key, "", "", []any{base.body})
	if s.MinProps > 0 {
		f.check(t, method, base.path, key, "", "", map[string]any{})
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		f.check(t, method, base.path, key, "unexpectedMember", "", with(base.body, "unexpectedMember", 1))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		ps := s.Properties[name].Value
		if _, present := base.body[name]; present {
			f.check(t, method, base.path, key, name, "", without(base.body, name))
		}
		for _, v := range memberCandidates(ps) {
			f.check(t, method, base.path, key, name, fmt.Sprint(v), with(base.body, name, v))
		}
	}
}

// memberCandidates are the values tried for a body member: its enum and a miss, values beyond its
// pattern, length and bounds, and a value of another type.
func memberCandidates(s *openapi3.Schema) []any {
	var out []any
	for _, v := range s.Enum {
		out = append(out, v)
	}
	switch {
	case s.Type.Is("string"):
		out = append(out, 12345, "", "not valid!", strings.Repeat("a", 600))
		if len(s.Enum) > 0 {
			out = append(out, "bogus")
		}
		if s.MaxLength != nil {
			out = append(out, strings.Repeat("a", int(*s.MaxLength)+1))
		}
	case s.Type.Is("integer"):
		out = append(out, "12", 1.5, 0, -1)
		if s.Min != nil {
			out = append(out, *s.Min-1)
		}
	case s.Type.Is("boolean"):
		out = append(out, "yes", true, false)
	case s.Type.Is("array"):
		out = append(out, "x", []any{}, []any{12345})
	}
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	out := maps.Clone(m)
	out[k] = v
	return out
}

func without(m map[string]any, k string) map[string]any {
	out := maps.Clone(m)
	delete(out, k)
	return out
}

func sortedPaths(doc *openapi3.T) []string {
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	return paths
}
