package query_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/budget"
)

func init() {
	// tracker.js is a text body; validate it as one.
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.FileBodyDecoder)
}

// call is one request of the contract run. Paths may depend on earlier answers (pathFn), and after
// may record what later calls need.
type call struct {
	name   string
	method string
	path   string
	pathFn func() string
	key    string
	header map[string]string
	body   any // marshalled as JSON; a string or []byte is sent as is
	want   int
	// invalidRequest marks a deliberately malformed request: it is not checked against the
	// description, only its answer is.
	invalidRequest bool
	// before runs first (say, to exhaust a rate limit); after sees the answer's body.
	before func(t *testing.T)
	after  func(t *testing.T, body []byte)
	// noRedirect checks a redirect as the answer instead of following it.
	noRedirect bool
}

// contractEnv is a running `revtrack all` with a seeded workspace.
type contractEnv struct {
	base                 string
	read, admin, lapsed  string // workspace API keys
	spent                string // a workspace API key whose reporting budget the run spends (429)
	spendBudget          func(t *testing.T)
	pk, sk, sourceID     string // tracking source of acme
	limitedPK, limitedSK string // a second source, to reach the rate limits
	lapsedPK, lapsedSK   string // a source of the lapsed workspace
	platform             platformFixture
	from, to             string // a range holding the tracking events
	eventDay             time.Time
	partnerURL           string      // a partner API stand-in
	ads                  adsContract // the fake Google of the advertising setup
}

// Rate limits low enough to reach in a test, high enough for the calls on the main source.
const testRateLimit = 8

func startContractEnv(t *testing.T) contractEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	s := tenant.Store
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A second app in the workspace, to make a shop domain ambiguous.
	must(s.PutApp(ctx, "test", controlplane.App{ID: "app-2", Name: "Second app"}))
	_, err := s.SetSelectedApps(ctx, "test", "acme", []string{"app-1", "app-2"})
	must(err)
	e := contractEnv{pk: tenant.Source.PublicKey, sk: tenant.PrivateKey, sourceID: tenant.Source.ID}
	e.read, _, err = s.CreateAPIKey(ctx, "test", "acme", "reporting", controlplane.ScopeRead)
	must(err)
	e.admin, _, err = s.CreateAPIKey(ctx, "test", "acme", "admin", controlplane.ScopeAdmin)
	must(err)
	var spent controlplane.APIKey
	e.spent, spent, err = s.CreateAPIKey(ctx, "test", "acme", "spent", controlplane.ScopeRead)
	must(err)
	// The app's budget of that key lives in the same Redis: charging it the way a tool call is
	// charged spends it without a thousand requests.
	limits := budget.New(budget.DefaultConfig(), &budget.RedisBuckets{Client: db.Redis, Prefix: db.RedisC.KeyPrefix}, nil)
	e.spendBudget = func(t *testing.T) {
		for range 2 * budget.DefaultConfig().Budget {
			if err := limits.Charge(testenv.Ctx(t), spent.ID); errors.Is(err, budget.ErrRateLimited) {
				// A drained bucket gains a unit every 250 ms (240 a minute), which a loaded machine can
				// spend between this and the request (CI saw a 200 here once); a debt of 600 units,
				// written where the bucket script keeps its state, keeps the key refused for minutes.
				now, err := db.Redis.Time(testenv.Ctx(t)).Result()
				if err == nil {
					err = db.Redis.HSet(testenv.Ctx(t), db.RedisC.KeyPrefix+"qbudget:cost:"+spent.ID,
						"tokens", "-600", "at", now.UnixMilli()).Err()
				}
				if err != nil {
					t.Fatal(err)
				}
				return
			} else if err != nil {
				t.Fatal(err)
			}
		}
		t.Fatal("the budget was not spent")
	}
	limited, limitedSK, err := s.CreateSource(ctx, "test", "acme", "app-1", "limits", []string{"https://app.example"})
	must(err)
	e.limitedPK, e.limitedSK = limited.PublicKey, limitedSK

	// A workspace whose subscription lapsed: its keys are refused with 403.
	_, err = s.CreateWorkspace(ctx, "test", "lapsed", "Lapsed", controlplane.StatusActive)
	must(err)
	_, err = s.SetSelectedApps(ctx, "test", "lapsed", []string{"app-1"})
	must(err)
	e.lapsed, _, err = s.CreateAPIKey(ctx, "test", "lapsed", "reporting", controlplane.ScopeAdmin)
	must(err)
	lapsedSrc, lapsedSK, err := s.CreateSource(ctx, "test", "lapsed", "app-1", "site", []string{"https://app.example"})
	must(err)
	e.lapsedPK, e.lapsedSK = lapsedSrc.PublicKey, lapsedSK
	_, err = s.SetSubscriptionStatus(ctx, "test", "lapsed", controlplane.StatusCanceled)
	must(err)

	now := time.Now().UTC()
	e.platform = seedPlatform(t, db.Conn, tenant.Source.WorkspaceID, now)
	e.eventDay = now.Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(10 * time.Hour)
	e.from, e.to = e.eventDay.Format(time.DateOnly), now.Format(time.DateOnly)

	// A partner API that refuses every token: sync runs start (202) and then fail on their own.
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"errors":[{"message":"invalid token"}]}`, http.StatusUnauthorized)
	}))
	t.Cleanup(partner.Close)
	e.partnerURL = partner.URL

	// The advertising connection goes to a fake of Google's APIs (openapi_ads_test.go).
	e.ads = startAdsContract(t, db, tenant)

	limit := fmt.Sprint(testRateLimit)
	keys := "test-k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	app := runapp.Start(t, testenv.KafkaConfig(t), db.CH, db.RedisC, append([]string{"--encryption-keys", keys, "--partner-api-base-url", e.partnerURL,
		"--ingest-server-events-per-minute", limit, "--ingest-browser-requests-per-minute", limit}, e.ads.flags()...)...)
	e.base = app.URL()
	return e
}

// TestOpenAPIResponsesMatchHandlers runs real requests against `revtrack all` on a migrated, seeded
// database and validates every answer (successes and errors) against the description. Requests of
// routes not registered yet are skipped; every registered route must be exercised with a success.
func TestOpenAPIResponsesMatchHandlers(t *testing.T) {
	e := startContractEnv(t)
	doc := loadDoc(t)
	doc.Servers = openapi3.Servers{{URL: e.base}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	registered := registeredRoutes(t)
	exercised := map[string]map[int]bool{}

	run := func(c call) {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before(t)
			}
			path := c.path
			if c.pathFn != nil {
				path = c.pathFn()
			}
			req, reqBody := e.request(t, c, path)
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("%s %s is not described: %v", c.method, path, err)
			}
			key := routeKey(c.method, route.Path)
			if !registered[key] {
				t.Fatalf("%s is described but not registered", key)
			}
			in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
			if !c.invalidRequest {
				if err := openapi3filter.ValidateRequest(testenv.Ctx(t), in); err != nil {
					t.Fatalf("the test's request does not match the description: %v", err)
				}
				if reqBody != nil { // validation read it; a nil body must stay nil (Content-Length: 0)
					req.Body = io.NopCloser(bytes.NewReader(reqBody))
				}
			}
			client := http.DefaultClient
			if c.noRedirect {
				client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%s %s: status %d, want %d: %s", c.method, path, resp.StatusCode, c.want, body)
			}
			err = openapi3filter.ValidateResponse(testenv.Ctx(t), &openapi3filter.ResponseValidationInput{
				RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
				Body:    io.NopCloser(bytes.NewReader(body)),
				Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
			})
			if err != nil {
				t.Fatalf("%s %s answered %d with a body or headers the description does not allow:\n%v\nbody: %s",
					c.method, path, resp.StatusCode, err, body)
			}
			if exercised[key] == nil {
				exercised[key] = map[int]bool{}
			}
			exercised[key][resp.StatusCode] = true
			if c.after != nil {
				c.after(t, body)
			}
		})
	}

	for _, c := range e.ingestCalls() {
		run(c)
	}
	e.awaitTrackingData(t)
	for _, calls := range [][]call{e.trackingCalls(t), e.reportingCalls(), e.adminCalls(), e.adsCalls(), e.analystCalls(), e.peopleCalls()} {
		for _, c := range calls {
			run(c)
		}
	}

	// Every registered route was answered with a success at least once; report the documented
	// statuses no call produced (503 cannot be provoked against healthy services).
	var missing []string
	for _, key := range sortedKeys(registered) {
		method, path, _ := strings.Cut(key, " ")
		op := findOperation(doc, method, path)
		if op == nil {
			continue // TestOpenAPIDescribesEveryRoute reports it
		}
		ok := false
		for status := range exercised[key] {
			ok = ok || status < 300 || status == http.StatusFound
		}
		if !ok {
			t.Errorf("route %s was not exercised with a successful request: add one to the contract run", key)
		}
		for status := range op.Responses.Map() {
			var n int
			if _, err := fmt.Sscan(status, &n); err == nil && !exercised[key][n] {
				missing = append(missing, key+" "+status)
			}
		}
	}
	sort.Strings(missing)
	t.Logf("documented answers not produced by this run: %s", strings.Join(missing, ", "))
}

func findOperation(doc *openapi3.T, method, key string) *openapi3.Operation {
	for path, item := range doc.Paths.Map() {
		if routeKey(method, path) == method+" "+key {
			return item.GetOperation(method)
		}
	}
	return nil
}

// request builds the HTTP request of a call and returns it with its body bytes.
func (e contractEnv) request(t *testing.T, c call, path string) (*http.Request, []byte) {
	t.Helper()
	var body []byte
	switch b := c.body.(type) {
	case nil:
	case []byte:
		body = b
	case string:
		body = []byte(b)
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testenv.Ctx(t), c.method, e.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	return req, body
}

// awaitTrackingData waits until the ingested events went through Kafka and the processors.
func (e contractEnv) awaitTrackingData(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, "ingested tracking events to be readable", func() bool {
		req, _ := http.NewRequest(http.MethodGet, e.base+"/api/v1/tracking/events?from="+e.from+"&to="+e.to, nil)
		req.Header.Set("Authorization", "Bearer "+e.read)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var r struct{ Events []struct{ Evidence string } }
		if json.NewDecoder(resp.Body).Decode(&r) != nil {
			return false
		}
		seen := map[string]int{}
		for _, ev := range r.Events {
			seen[ev.Evidence]++
		}
		return seen["Browser"] >= 2 && seen["Server"] >= 2
	})
}

func (e contractEnv) at(minute int) string {
	return e.eventDay.Add(time.Duration(minute) * time.Minute).Format(time.RFC3339)
}

func (e contractEnv) serverEvent(pk, id, name string, extra map[string]any) map[string]any {
	ev := map[string]any{"teamSlug": "acme", "publicKey": pk, "eventId": id, "acquisitionId": "acq-contract", "name": name,
		"customerRef": e.platform.alphaDomain, "occurredAt": e.at(5)}
	for k, v := range extra {
		ev[k] = v
	}
	return ev
}

func (e contractEnv) pageView(id string, minute int) map[string]any {
	return map[string]any{"eventId": id, "name": "page_view", "occurredAt": e.at(minute), "acquisitionId": "acq-contract",
		"sessionId": "s-1", "returning": false, "url": "https://app.example/pricing", "path": "/pricing", "title": "Pricing",
		"firstTouch": map[string]any{"trackerRef": "partner-7", "utmSource": "newsletter", "utmCampaign": "launch", "gclid": "click-1",
			"landingUrl": "https://app.example/?gclid=click-1"}}
}

var origin = map[string]string{"Origin": "https://app.example"}

// burst sends requests until the edge answers 429, so that the call after it is refused too. The
// limiter counts per wall-clock minute, so it starts well inside one: the burst and that call then
// share the window.
func (e contractEnv) burst(t *testing.T, method, path string, header map[string]string, body func(i int) any) {
	t.Helper()
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	for i := range 3 * testRateLimit {
		req, _ := e.request(t, call{method: method, header: header, body: body(i)}, path)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return
		}
	}
	t.Fatalf("%s %s: no 429 after %d requests with a limit of %d per minute", method, path, 3*testRateLimit, testRateLimit)
}

func (e contractEnv) ingestCalls() []call {
	paid := map[string]any{"amountCents": 2900, "currency": "USD"}
	big := strings.Repeat("x", 70<<10)
	return []call{
		{name: "openapi description", method: "GET", path: "/api/v1/openapi.json", want: 200},
		{name: "collect page views", method: "POST", path: "/v1/collect", header: origin, want: 202,
			body: map[string]any{"key": e.pk, "batch": []any{e.pageView("b-1", 0), e.pageView("b-2", 1)}}},
		{name: "collect with a rejected event", method: "POST", path: "/v1/collect", header: origin, want: 202, invalidRequest: true,
			body: map[string]any{"key": e.pk, "batch": []any{e.pageView("b-3", 2), map[string]any{"eventId": "b-4", "name": "bad name"}}},
			after: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"index":1`)) {
					t.Errorf("the invalid event was not reported: %s", body)
				}
			}},
		{name: "collect empty batch", method: "POST", path: "/v1/collect", header: origin, want: 400, invalidRequest: true,
			body: map[string]any{"key": e.pk, "batch": []any{}}},
		{name: "collect unknown key", method: "POST", path: "/v1/collect", header: origin, want: 401,
			body: map[string]any{"key": "tracker_pk_unknown", "batch": []any{e.pageView("b-5", 3)}}},
		{name: "collect origin not allowed", method: "POST", path: "/v1/collect", want: 403,
			header: map[string]string{"Origin": "https://www.app.example"},
			body:   map[string]any{"key": e.pk, "batch": []any{e.pageView("b-6", 3)}}},
		{name: "collect lapsed workspace", method: "POST", path: "/v1/collect", header: origin, want: 403,
			body: map[string]any{"key": e.lapsedPK, "batch": []any{e.pageView("b-7", 3)}}},
		{name: "collect too large", method: "POST", path: "/v1/collect", header: origin, want: 413, invalidRequest: true,
			body: map[string]any{"key": e.pk, "batch": []any{big}}},
		{name: "collect rate limited", method: "POST", path: "/v1/collect", header: origin, want: 429,
			body: map[string]any{"key": e.limitedPK, "batch": []any{e.pageView("b-8", 3)}},
			before: func(t *testing.T) {
				e.burst(t, "POST", "/v1/collect", origin, func(i int) any {
					return map[string]any{"key": e.limitedPK, "batch": []any{e.pageView(fmt.Sprintf("burst-%d", i), 3)}}
				})
			}},
		{name: "collect preflight", method: "OPTIONS", path: "/v1/collect", want: 204,
			header: map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}},
		{name: "tracker.js", method: "GET", path: "/v1/tracker.js", want: 200},
		{name: "tracker.js head", method: "HEAD", path: "/v1/tracker.js", want: 200},

		{name: "server event", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 202,
			body: e.serverEvent(e.pk, "s-install", "install", nil)},
		{name: "server event paid", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 202,
			body: e.serverEvent(e.pk, "s-paid", "paid", paid)},
		{name: "server event duplicate", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 200,
			body: e.serverEvent(e.pk, "s-paid", "paid", paid)},
		{name: "server event invalid field", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 400,
			invalidRequest: true, body: e.serverEvent(e.pk, "s-bad", "purchased", nil)},
		{name: "server event without key", method: "POST", path: "/api/tracking/server-events", want: 401,
			body: e.serverEvent(e.pk, "s-nokey", "install", nil)},
		{name: "server event wrong team", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 401,
			body: e.serverEvent(e.pk, "s-team", "install", map[string]any{"teamSlug": "someone-else"})},
		{name: "server event lapsed workspace", method: "POST", path: "/api/tracking/server-events", key: e.lapsedSK, want: 403,
			body: e.serverEvent(e.lapsedPK, "s-lapsed", "install", map[string]any{"teamSlug": "lapsed"})},
		{name: "server event too large", method: "POST", path: "/api/tracking/server-events", key: e.sk, want: 413,
			invalidRequest: true, body: e.serverEvent(e.pk, "s-big", "install", map[string]any{"customerRef": big})},
		{name: "server event rate limited", method: "POST", path: "/api/tracking/server-events", key: e.limitedSK, want: 429,
			body: e.serverEvent(e.limitedPK, "s-limited", "install", nil),
			before: func(t *testing.T) {
				e.burst(t, "POST", "/api/tracking/server-events", map[string]string{"Authorization": "Bearer " + e.limitedSK},
					func(i int) any { return e.serverEvent(e.limitedPK, fmt.Sprintf("s-burst-%d", i), "install", nil) })
			}},
		{name: "tracker.js not modified", method: "GET", path: "/v1/tracker.js", want: 304,
			header: map[string]string{"If-None-Match": trackerETag(e.base)}},
	}
}

// trackerETag is the ETag of the encoding the contract run's own GET gets (Go's transport asks for
// gzip on a GET but not on a HEAD, and each encoding has its own ETag).
func trackerETag(base string) string {
	resp, err := http.Get(base + "/v1/tracker.js")
	if err != nil {
		return ""
	}
	resp.Body.Close()
	return resp.Header.Get("ETag")
}

func (e contractEnv) trackingCalls(t *testing.T) []call {
	rng := "from=" + e.from + "&to=" + e.to
	return []call{
		{name: "tracking events", method: "GET", path: "/api/v1/tracking/events?" + rng, key: e.read, want: 200},
		{name: "tracking events of one browser", method: "GET", key: e.read, want: 200,
			path: "/api/v1/tracking/events?limit=10&sourceId=" + e.sourceID + "&acquisitionId=acq-contract&" + rng},
		{name: "tracking events by name and shop, one a page", method: "GET", key: e.read, want: 200,
			path: "/api/v1/tracking/events?limit=1&name=page_view&shop=none.example&" + rng},
		{name: "tracking events next page", method: "GET", key: e.read, want: 200,
			path: "/api/v1/tracking/events?limit=1&cursor=" + e.eventsCursor(t, rng) + "&" + rng},
		{name: "tracking events bad cursor", method: "GET", path: "/api/v1/tracking/events?cursor=nope", key: e.read, want: 400},
		{name: "journey", method: "GET", path: "/api/v1/tracking/acquisitions/acq-contract", key: e.read, want: 200},
		{name: "journey of the source", method: "GET", key: e.read, want: 200,
			path: "/api/v1/tracking/acquisitions/acq-contract?sourceId=" + e.sourceID},
		{name: "journey unknown", method: "GET", path: "/api/v1/tracking/acquisitions/acq-nobody", key: e.read, want: 404},
		{name: "journey unknown source", method: "GET", path: "/api/v1/tracking/acquisitions/acq-contract?sourceId=nope", key: e.read, want: 404},
		{name: "journey with the private key", method: "GET", path: "/api/v1/tracking/acquisitions/acq-contract", key: e.sk, want: 403},
		{name: "tracking events with the private key", method: "GET", path: "/api/v1/tracking/events?" + rng, key: e.sk, want: 403},
		{name: "tracking events bad date", method: "GET", path: "/api/v1/tracking/events?from=yesterday", key: e.read, want: 400,
			invalidRequest: true},
		{name: "tracking events unknown source", method: "GET", path: "/api/v1/tracking/events?sourceId=nope", key: e.read, want: 404},
		{name: "tracking events without key", method: "GET", path: "/api/v1/tracking/events", want: 401},
		{name: "tracking events wrong key", method: "GET", path: "/api/v1/tracking/events", key: "revtrack_sk_wrong", want: 401},
		{name: "tracking events lapsed", method: "GET", path: "/api/v1/tracking/events", key: e.lapsed, want: 403},
		{name: "source status", method: "GET", path: "/api/v1/tracking/sources/" + e.sourceID + "/status?" + rng, key: e.read, want: 200},
		{name: "source status unknown", method: "GET", path: "/api/v1/tracking/sources/nope/status", key: e.read, want: 404},
		{name: "funnel", method: "GET", path: "/api/v1/tracking/funnel?groupBy=tracker_ref&" + rng, key: e.read, want: 200},
		{name: "funnel by source", method: "GET", path: "/api/v1/tracking/funnel?windowDays=7&sourceId=" + e.sourceID + "&" + rng,
			key: e.read, want: 200},
		{name: "funnel bad dimension", method: "GET", path: "/api/v1/tracking/funnel?groupBy=country", key: e.read, want: 400,
			invalidRequest: true},
		{name: "ledger", method: "GET", path: "/api/v1/tracking/ledger?" + rng, key: e.read, want: 200},
		{name: "ledger bad range", method: "GET", path: "/api/v1/tracking/ledger?from=2026-01-02&to=2026-01-01", key: e.read, want: 400},
	}
}

// eventsCursor is the nextCursor of the first one-event page of recent events.
func (e contractEnv) eventsCursor(t *testing.T, rng string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodGet, e.base+"/api/v1/tracking/events?limit=1&"+rng, nil)
	req.Header.Set("Authorization", "Bearer "+e.read)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ NextCursor *string }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || page.NextCursor == nil {
		t.Fatalf("a first page of one event with a next cursor: %v", err)
	}
	return *page.NextCursor
}

func (e contractEnv) reportingCalls() []call {
	f := e.platform
	rng := "from=" + f.day(-29).Format(time.DateOnly) + "&to=" + f.today.Format(time.DateOnly)
	var cursor string
	calls := []call{
		{name: "summary", method: "GET", path: "/api/v1/summary", key: e.read, want: 200},
		{name: "summary one app and currency", method: "GET", key: e.read, want: 200,
			path: "/api/v1/summary?currency=USD&appId=app-1&customerScope=all&" + rng},
		{name: "summary excluded", method: "GET", path: "/api/v1/summary?customerScope=excluded", key: e.read, want: 200},
		{name: "summary range reversed", method: "GET", path: "/api/v1/summary?from=2026-01-02&to=2026-01-01", key: e.read, want: 400},
		{name: "summary bad scope", method: "GET", path: "/api/v1/summary?customerScope=everyone", key: e.read, want: 400,
			invalidRequest: true},
		{name: "summary without key", method: "GET", path: "/api/v1/summary", want: 401},
		{name: "summary lapsed", method: "GET", path: "/api/v1/summary", key: e.lapsed, want: 403},
		{name: "summary with the private key", method: "GET", path: "/api/v1/summary", key: e.sk, want: 403},
		{name: "summary beyond the budget", method: "GET", path: "/api/v1/summary", key: e.spent, want: 429, before: e.spendBudget},
		{name: "summary kept, forced recomputation", method: "GET", path: "/api/v1/summary", key: e.read, want: 200,
			header: map[string]string{"Cache-Control": "no-cache"}},
		{name: "metric unknown", method: "GET", path: "/api/v1/metrics/churn", key: e.read, want: 404, invalidRequest: true},
		{name: "customers", method: "GET", path: "/api/v1/customers?" + rng, key: e.read, want: 200},
		{name: "customers first page", method: "GET", path: "/api/v1/customers?limit=2", key: e.read, want: 200,
			after: func(t *testing.T, body []byte) {
				var r struct{ NextCursor *string }
				if json.Unmarshal(body, &r) != nil || r.NextCursor == nil {
					t.Fatalf("a first page of 2 of 5 customers has no nextCursor: %s", body)
				}
				cursor = *r.NextCursor
			}},
		{name: "customers next page", method: "GET", key: e.read, want: 200,
			pathFn: func() string { return "/api/v1/customers?limit=2&cursor=" + url.QueryEscape(cursor) }},
		{name: "customers all scopes", method: "GET", path: "/api/v1/customers?customerScope=all&appId=app-1", key: e.read, want: 200},
		{name: "customers bad limit", method: "GET", path: "/api/v1/customers?limit=0", key: e.read, want: 400, invalidRequest: true},
		{name: "customers lapsed", method: "GET", path: "/api/v1/customers", key: e.lapsed, want: 403},
		{name: "customer by id", method: "GET", path: "/api/v1/customers/" + f.alphaID + "?" + rng, key: e.read, want: 200},
		{name: "customer by domain", method: "GET", path: "/api/v1/customers/" + f.alphaDomain + "?limit=1", key: e.read, want: 200},
		{name: "customer excluded", method: "GET", path: "/api/v1/customers/golf.example", key: e.read, want: 200},
		{name: "customer ambiguous domain", method: "GET", path: "/api/v1/customers/" + f.sharedDomain, key: e.read, want: 409},
		{name: "customer unknown", method: "GET", path: "/api/v1/customers/cus_00000000000000000000", key: e.read, want: 404},
		{name: "customer bad limit", method: "GET", path: "/api/v1/customers/" + f.alphaID + "?limit=51", key: e.read, want: 400,
			invalidRequest: true},
		{name: "customer without key", method: "GET", path: "/api/v1/customers/" + f.alphaID, want: 401},
		{name: "attribution", method: "GET", path: "/api/v1/attribution?groupBy=utm_campaign", key: e.read, want: 200},
		{name: "attribution one app and currency", method: "GET", key: e.read, want: 200,
			path: "/api/v1/attribution?groupBy=click_id_type&currency=USD&appId=app-1&" + rng},
		{name: "attribution kept, forced recomputation", method: "GET", path: "/api/v1/attribution?groupBy=utm_campaign", key: e.read,
			want: 200, header: map[string]string{"Cache-Control": "no-cache"}},
		{name: "attribution without groupBy", method: "GET", path: "/api/v1/attribution", key: e.read, want: 400, invalidRequest: true},
		{name: "attribution without key", method: "GET", path: "/api/v1/attribution?groupBy=utm_source", want: 401},
		{name: "attribution lapsed", method: "GET", path: "/api/v1/attribution?groupBy=utm_source", key: e.lapsed, want: 403},
	}
	calls = append(calls,
		call{name: "metric series", method: "GET", path: "/api/v1/metrics/mrr?interval=week&" + rng, key: e.read, want: 200},
		call{name: "metric series bad interval", method: "GET", path: "/api/v1/metrics/mrr?interval=hour", key: e.read, want: 400,
			invalidRequest: true},
		call{name: "mrr movements", method: "GET", path: "/api/v1/mrr-movements?interval=day&" + rng, key: e.read, want: 200},
		call{name: "mrr movements monthly, one currency", method: "GET", path: "/api/v1/mrr-movements?currency=USD", key: e.read, want: 200},
		call{name: "mrr movements bad interval", method: "GET", path: "/api/v1/mrr-movements?interval=year", key: e.read, want: 400,
			invalidRequest: true},
		call{name: "mrr movement customers", method: "GET", key: e.read, want: 200,
			path: "/api/v1/mrr-movements/customers?type=new&limit=1&period=" + f.today.Format(time.DateOnly)},
		call{name: "mrr movement customers without type", method: "GET", path: "/api/v1/mrr-movements/customers", key: e.read, want: 400,
			invalidRequest: true},
		call{name: "mrr movements without key", method: "GET", path: "/api/v1/mrr-movements", want: 401},
		call{name: "cohorts", method: "GET", path: "/api/v1/cohorts", key: e.read, want: 200},
		call{name: "cohorts by first payment, one currency", method: "GET", path: "/api/v1/cohorts?by=first_paid&currency=USD&" + rng, key: e.read,
			want: 200},
		call{name: "cohorts bad basis", method: "GET", path: "/api/v1/cohorts?by=signup", key: e.read, want: 400, invalidRequest: true},
	)
	for _, m := range []string{"mrr", "arr", "usage", "net-revenue-retention", "customer-concentration"} {
		calls = append(calls,
			call{name: "metric " + m, method: "GET", path: "/api/v1/metrics/" + m, key: e.read, want: 200},
			call{name: "metric " + m + " one currency", method: "GET", path: "/api/v1/metrics/" + m + "?currency=EUR&" + rng,
				key: e.read, want: 200})
	}
	return calls
}

func (e contractEnv) adminCalls() []call {
	var newSource, newKey string
	src := func(suffix string) func() string {
		return func() string { return "/api/admin/sources/" + newSource + suffix }
	}
	return []call{
		{name: "sources", method: "GET", path: "/api/admin/sources", key: e.admin, want: 200},
		{name: "sources with a read key", method: "GET", path: "/api/admin/sources", key: e.read, want: 403},
		{name: "sources without key", method: "GET", path: "/api/admin/sources", want: 401},
		{name: "sources lapsed", method: "GET", path: "/api/admin/sources", key: e.lapsed, want: 403},
		{name: "create source", method: "POST", path: "/api/admin/sources", key: e.admin, want: 201,
			body: map[string]any{"appId": "app-2", "name": "Landing page", "allowedOrigins": []string{"https://landing.example"}},
			after: func(t *testing.T, body []byte) {
				var r struct{ Source struct{ ID string } }
				if json.Unmarshal(body, &r) != nil || r.Source.ID == "" {
					t.Fatalf("no source ID: %s", body)
				}
				newSource = r.Source.ID
			}},
		{name: "create source not JSON", method: "POST", path: "/api/admin/sources", key: e.admin, want: 400, invalidRequest: true,
			body: "{"},
		{name: "create source unselected app", method: "POST", path: "/api/admin/sources", key: e.admin, want: 400,
			body: map[string]any{"appId": "app-9", "allowedOrigins": []string{"https://landing.example"}}},
		{name: "source", method: "GET", pathFn: src(""), key: e.admin, want: 200},
		{name: "source unknown", method: "GET", path: "/api/admin/sources/nope", key: e.admin, want: 404},
		{name: "disable source", method: "PATCH", pathFn: src(""), key: e.admin, want: 200,
			body: map[string]any{"enabled": false, "allowedOrigins": []string{"https://landing.example", "http://localhost:3000"}}},
		{name: "update source not JSON", method: "PATCH", pathFn: src(""), key: e.admin, want: 400, invalidRequest: true, body: "["},
		{name: "update source unknown", method: "PATCH", path: "/api/admin/sources/nope", key: e.admin, want: 404,
			body: map[string]any{"enabled": true}},
		{name: "rotate public key", method: "POST", pathFn: src("/rotate-public-key"), key: e.admin, want: 200},
		{name: "rotate private key", method: "POST", pathFn: src("/rotate-private-key"), key: e.admin, want: 200},
		{name: "rotate unknown", method: "POST", path: "/api/admin/sources/nope/rotate-private-key", key: e.admin, want: 404},
		{name: "keys", method: "GET", path: "/api/admin/keys", key: e.admin, want: 200},
		{name: "create key", method: "POST", path: "/api/admin/keys", key: e.admin, want: 201,
			body: map[string]any{"name": "dashboard", "scope": "read"},
			after: func(t *testing.T, body []byte) {
				var r struct{ Key struct{ ID string } }
				if json.Unmarshal(body, &r) != nil || r.Key.ID == "" {
					t.Fatalf("no key ID: %s", body)
				}
				newKey = r.Key.ID
			}},
		{name: "create key without name", method: "POST", path: "/api/admin/keys", key: e.admin, want: 400, invalidRequest: true,
			body: map[string]any{"scope": "read"}},
		{name: "revoke key", method: "POST", key: e.admin, want: 200,
			pathFn: func() string { return "/api/admin/keys/" + newKey + "/revoke" }},
		{name: "revoke unknown key", method: "POST", path: "/api/admin/keys/nope/revoke", key: e.admin, want: 404},
		{name: "keys after revoke", method: "GET", path: "/api/admin/keys", key: e.admin, want: 200},
		{name: "audit", method: "GET", path: "/api/admin/audit?limit=20", key: e.admin, want: 200},
		{name: "audit filtered, one page", method: "GET", path: "/api/admin/audit?limit=1&action=api_key&from=2026-01-01", key: e.admin, want: 200},
		{name: "audit bad cursor", method: "GET", path: "/api/admin/audit?cursor=nope", key: e.admin, want: 400},
		{name: "audit bad limit", method: "GET", path: "/api/admin/audit?limit=0", key: e.admin, want: 400, invalidRequest: true},

		{name: "exclusions", method: "GET", path: "/api/admin/customer-exclusions", key: e.admin, want: 200},
		{name: "exclude a shop", method: "POST", path: "/api/admin/customer-exclusions", key: e.admin, want: 200,
			body: map[string]any{"shopDomain": "foxtrot.example", "appId": "app-1", "reason": "partner store"}},
		{name: "exclude without domain", method: "POST", path: "/api/admin/customer-exclusions", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"reason": "?"}},
		{name: "lift an exclusion", method: "DELETE", path: "/api/admin/customer-exclusions?shopDomain=foxtrot.example&appId=app-1",
			key: e.admin, want: 200},
		{name: "exclusions with lifted", method: "GET", path: "/api/admin/customer-exclusions?lifted=true", key: e.admin, want: 200},
		{name: "exclusions bad flag", method: "GET", path: "/api/admin/customer-exclusions?lifted=maybe", key: e.admin, want: 400,
			invalidRequest: true},
		{name: "lift without domain", method: "DELETE", path: "/api/admin/customer-exclusions", key: e.admin, want: 400,
			invalidRequest: true},

		{name: "partner connection none", method: "GET", path: "/api/admin/partner-connection", key: e.admin, want: 404},
		{name: "sync runs without connection", method: "POST", path: "/api/admin/sync-runs", key: e.admin, want: 409},
		{name: "connect partner", method: "PUT", path: "/api/admin/partner-connection", key: e.admin, want: 200,
			body: map[string]any{"organizationId": "1234", "accessToken": "prtapi_test"}},
		{name: "connect partner with an address", method: "PUT", path: "/api/admin/partner-connection", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"organizationId": "1234", "accessToken": "prtapi_test", "apiBaseUrl": e.partnerURL}},
		{name: "connect partner bad organization", method: "PUT", path: "/api/admin/partner-connection", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"organizationId": "acme", "accessToken": "prtapi_test"}},
		{name: "partner connection", method: "GET", path: "/api/admin/partner-connection", key: e.admin, want: 200,
			after: func(t *testing.T, body []byte) {
				if bytes.Contains(body, []byte("prtapi_test")) {
					t.Errorf("the token came back: %s", body)
				}
			}},
		{name: "start sync runs", method: "POST", path: "/api/admin/sync-runs", key: e.admin, want: 202, body: map[string]any{"appId": "app-2"}},
		{name: "sync runs", method: "GET", path: "/api/admin/sync-runs?limit=5", key: e.admin, want: 200},
		{name: "sync runs bad limit", method: "GET", path: "/api/admin/sync-runs?limit=0", key: e.admin, want: 400, invalidRequest: true},
		{name: "disconnect partner", method: "DELETE", path: "/api/admin/partner-connection", key: e.admin, want: 204},
	}
}
