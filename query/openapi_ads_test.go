package query_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/uploader"
	"github.com/revtrack/revtrack/uploader/google"
)

func init() {
	// The OAuth callback answers a browser with a page; validate it as a text body.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
}

// adsContract is the advertising side of the contract run: the local fake of Google's OAuth, Data
// Manager and Google Ads APIs that `revtrack all` is pointed at, and what the calls need to write
// upload-queue rows the way the uploader does.
type adsContract struct {
	fake        *googlefake.Fake
	url         string
	conn        driver.Conn
	workspaceID string
	sourceID    string
}

func startAdsContract(t *testing.T, db pipeline.DB, tenant pipeline.Tenant) adsContract {
	t.Helper()
	fake := googlefake.New(googlefake.DefaultConfig())
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return adsContract{fake: fake, url: srv.URL, conn: db.Conn, workspaceID: tenant.Source.WorkspaceID, sourceID: tenant.Source.ID}
}

// flags configure the advertising connection of `revtrack all` against the fake (the fake's
// default OAuth client). The redirect URI defaults to the app's own callback.
func (a adsContract) flags() []string {
	cfg := googlefake.DefaultConfig()
	return []string{"--ads-google-base-url", a.url, "--ads-oauth-client-id", cfg.ClientID,
		"--ads-oauth-client-secret", cfg.ClientSecret}
}

// consent plays the browser on Google's consent page: it opens authURL on the fake (asking only
// for scopes, when given, as a user who unticks a permission) and returns the path of the
// service's callback the fake redirects to, state and code included.
func (a adsContract) consent(t *testing.T, authURL string, scopes ...string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil || authURL == "" {
		t.Fatalf("authorization URL %q: %v", authURL, err)
	}
	if len(scopes) > 0 {
		q := u.Query()
		q.Set("scope", strings.Join(scopes, " "))
		u.RawQuery = q.Encode()
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || back.Path != uploader.OAuthCallbackPath {
		t.Fatalf("consent at %s: %d, redirected to %q", u, resp.StatusCode, resp.Header.Get("Location"))
	}
	return back.RequestURI()
}

// begin plays the browser opening the begin link (its path, on base): it returns Google's consent
// URL and the cookie header that binds the browser to the connection.
func (a adsContract) begin(t *testing.T, base, link string) (consentURL, cookie string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || link == "" {
		t.Fatalf("begin link %q: %v", link, err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(base + u.RequestURI())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "revtrack_ads_oauth" {
			cookie = c.Name + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusFound || cookie == "" {
		t.Fatalf("begin %s: %d, cookie %q", link, resp.StatusCode, cookie)
	}
	return resp.Header.Get("Location"), cookie
}

// requestURI is the path and query of a URL the API answered (its host may be the configured
// public base URL rather than the test's listener).
func requestURI(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	return u.RequestURI()
}

// stateOf is the state parameter of an authorization URL.
func stateOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil || u.Query().Get("state") == "" {
		t.Fatalf("no state in %q", authURL)
	}
	return u.Query().Get("state")
}

// insertQueue writes upload-queue rows of mappingID as the uploader would have: one of each kind
// the queue list and the verification show, and the Retry outcomes (ids with their prefix).
func (a adsContract) insertQueue(t *testing.T, mappingID string) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	value := int64(2900)
	type row struct {
		id, status, clickType, clickID, requestID, message, diagnostics string
		reasons                                                         []string
		validationOnly                                                  uint8
		value                                                           *int64
		age                                                             time.Duration
	}
	rows := []row{
		{id: "uq_rejected", status: "rejected", clickType: "gclid", clickID: "fake-CLICK_NOT_FOUND-1", requestID: "req-1",
			message: "the click was not found", reasons: []string{"PROCESSING_ERROR_REASON_CLICK_NOT_FOUND"}, validationOnly: 1, age: 50 * time.Minute},
		{id: "uq_local", status: "rejected", clickType: "gclid", clickID: "click-2", reasons: []string{uploader.ReasonEventBeforeMapping},
			age: 40 * time.Minute},
		{id: "uq_unattributed", status: "unattributed", age: 30 * time.Minute},
		{id: "uq_validated", status: "validated", clickType: "wbraid", clickID: "w-4", requestID: "req-4", validationOnly: 1,
			value: &value, age: 20 * time.Minute},
		{id: "uq_accepted", status: "accepted", clickType: "gclid", clickID: "click-1", requestID: "req-5", diagnostics: "SUCCESS",
			value: &value, age: 10 * time.Minute},
	}
	insert(t, testenv.Ctx(t), a.conn, `INSERT INTO upload_queue (row_id, workspace_id, mapping_id, source_id, event_id_hash,
transaction_id, milestone, acquisition_id, click_id_type, click_id, event_time, value_cents, currency, status, validation_only,
attempts, next_attempt_at, request_id, reason_codes, message, created_at, updated_at, version, poll_attempts, diagnostics_status,
conversion_customer_id, login_customer_id, conversion_action_id, request_events)`,
		func(add func(...any)) {
			for i, r := range rows {
				created := now.Add(-r.age)
				currency := ""
				if r.value != nil {
					currency = "USD"
				}
				add(r.id, a.workspaceID, mappingID, a.sourceID, "hash-"+r.id, "rt-"+r.id, "paid", "acq-contract", r.clickType,
					r.clickID, created.Add(-time.Minute), r.value, currency, r.status, r.validationOnly, uint16(1), (*time.Time)(nil),
					r.requestID, append([]string{}, r.reasons...), r.message, created, created, uint64(now.UnixNano())+uint64(i),
					uint16(0), r.diagnostics, googlefake.DefaultCustomerID, googlefake.DefaultManagerID, googlefake.DefaultActionID,
					uint32(1))
			}
		})
}

// adsCalls exercise the advertising setup end to end on the configured deployment: before the
// connection, the consent (declined, partial, complete) through the fake, the account, the
// conversion actions, mappings, the upload queue with Retry, the verification order and the
// disconnection (refused by Google, then confirmed).
func (e contractEnv) adsCalls() []call {
	a := e.ads
	var authURL, callback, mappingID string
	// flow is the header of the browser that opened the begin link (its cookie), asking for JSON.
	flow := map[string]string{"Accept": "application/json"}
	begin := func(t *testing.T) string {
		consent, cookie := a.begin(t, e.base, authURL)
		flow["Cookie"] = cookie
		return consent
	}
	other := googlefake.DefaultAccount
	other.ID, other.Email = "104592000000000000055", "someone-else@example.com"
	// decision is the confirmation's body, filled from the held replacement.
	decision := map[string]any{"decision": "keep"}
	var csrf string
	connect := func(name string) call {
		return call{name: name, method: "POST", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: func(t *testing.T, body []byte) {
				var r struct{ AuthorizationURL string }
				if json.Unmarshal(body, &r) != nil || r.AuthorizationURL == "" {
					t.Fatalf("no authorizationUrl: %s", body)
				}
				authURL = r.AuthorizationURL
			}}
	}
	asJSON := map[string]string{"Accept": "application/json"}
	mapping := func(suffix string) func() string {
		return func() string { return "/api/admin/ads/mappings/" + mappingID + suffix }
	}
	newMapping := map[string]any{"sourceId": e.sourceID, "milestone": "paid", "conversionActionId": googlefake.DefaultActionID,
		"fixedValueCents": 1250, "fixedCurrency": "EUR", "consentConfirmed": true}
	account := map[string]any{"conversionCustomerId": "123-456-7890", "loginCustomerId": googlefake.DefaultManagerID}
	return []call{
		// Never connected.
		{name: "ads connection never connected", method: "GET", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: expectBody(`"configured":true`, `"state":"disconnected"`)},
		{name: "ads connection without key", method: "GET", path: "/api/admin/ads/connection", want: 401},
		{name: "ads connection with a read key", method: "GET", path: "/api/admin/ads/connection", key: e.read, want: 403},
		{name: "ads connection lapsed", method: "GET", path: "/api/admin/ads/connection", key: e.lapsed, want: 403},
		{name: "ads select account before connecting", method: "PUT", path: "/api/admin/ads/connection/account", key: e.admin,
			want: 409, body: account, after: expectBody(`"error":"conflict"`)},
		{name: "ads actions before connecting", method: "GET", path: "/api/admin/ads/conversion-actions", key: e.admin, want: 409},
		{name: "ads refresh before connecting", method: "POST", path: "/api/admin/ads/conversion-actions/refresh", key: e.admin,
			want: 409},
		{name: "ads mapping before connecting", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 409,
			body: newMapping},
		{name: "ads disconnect before connecting", method: "DELETE", path: "/api/admin/ads/connection", key: e.admin, want: 409},
		{name: "ads mappings none", method: "GET", path: "/api/admin/ads/mappings", key: e.admin, want: 200,
			after: expectBody(`"mappings":[]`)},
		{name: "ads verification before connecting", method: "GET", path: "/api/admin/ads/verification", key: e.admin, want: 200,
			after: expectBody(`"mappings":[]`, `"hint":"Connect`)},

		// The begin link: the first browser is bound and sent to Google; the link is single use.
		connect("ads connect"),
		{name: "ads begin", method: "GET", want: 302, noRedirect: true, pathFn: func() string { return requestURI(authURL) }},
		{name: "ads begin used", method: "GET", header: asJSON, want: 400, pathFn: func() string { return requestURI(authURL) },
			after: expectBody("already opened")},

		// Consent: declined, without a state, with a permission unticked, replayed, from another
		// browser, then complete.
		connect("ads connect again"),
		{name: "ads callback declined", method: "GET", header: flow, want: 400,
			before: func(t *testing.T) {
				callback = uploader.OAuthCallbackPath + "?error=access_denied&state=" + url.QueryEscape(stateOf(t, begin(t)))
			},
			pathFn: func() string { return callback },
			after:  expectBody(`"error":"access_denied"`)},
		{name: "ads callback without state", method: "GET", path: uploader.OAuthCallbackPath + "?code=4%2Fcode", want: 400,
			after: expectBody("<h1>Not connected</h1>")},
		connect("ads connect once more"),
		{name: "ads callback missing a scope", method: "GET", header: flow, want: 400,
			before: func(t *testing.T) { callback = a.consent(t, begin(t), google.ScopeDataManager) },
			pathFn: func() string { return callback },
			after:  expectBody(`"error":"missing_scopes"`, `"missingScopes":["`+google.ScopeAdWords+`"]`)},
		{name: "ads callback state used", method: "GET", header: flow, want: 400, pathFn: func() string { return callback },
			after: expectBody("start the connection again")},
		connect("ads connect a third time"),
		{name: "ads callback from another browser", method: "GET", header: asJSON, want: 403,
			before: func(t *testing.T) { callback = a.consent(t, begin(t)) },
			pathFn: func() string { return callback },
			after:  expectBody(`"error":"forbidden"`, "this browser did not start the connection")},
		{name: "ads callback", method: "GET", header: flow, want: 200, pathFn: func() string { return callback },
			after: expectBody(`"state":"connected"`, `"next":"Select the conversion account`, `"googleAccountEmail":"`+googlefake.DefaultAccount.Email+`"`)},
		{name: "ads connection connected", method: "GET", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: expectBody(`"state":"connected"`, `"ready":false`)},

		// Another Google account: held until the same browser confirms; kept here.
		connect("ads connect as another account"),
		{name: "ads callback of another account", method: "GET", header: flow, want: 202,
			before: func(t *testing.T) {
				a.fake.SignIn(other)
				callback = a.consent(t, begin(t))
			},
			pathFn: func() string { return callback },
			after: func(t *testing.T, body []byte) {
				a.fake.SignIn(googlefake.DefaultAccount)
				var r struct {
					Replacement struct{ ID string }
					CSRFToken   string
				}
				if json.Unmarshal(body, &r) != nil || r.Replacement.ID == "" || r.CSRFToken == "" {
					t.Fatalf("no held replacement: %s", body)
				}
				decision["pending"], decision["csrfToken"], csrf = r.Replacement.ID, "forged", r.CSRFToken
				expectBody(`"email":"`+other.Email+`"`, `"email":"`+googlefake.DefaultAccount.Email+`"`)(t, body)
			}},
		{name: "ads confirm with a forged CSRF token", method: "POST", path: uploader.OAuthConfirmPath, header: flow, want: 403,
			body: decision},
		{name: "ads confirm unknown", method: "POST", path: uploader.OAuthConfirmPath, header: flow, want: 400,
			body: map[string]any{"pending": "nope", "csrfToken": "x", "decision": "keep"}},
		{name: "ads confirm keep", method: "POST", path: uploader.OAuthConfirmPath, header: flow, want: 200, body: decision,
			before: func(*testing.T) { decision["csrfToken"] = csrf },
			after:  expectBody(`"replaced":false`, `"googleAccountEmail":"`+googlefake.DefaultAccount.Email+`"`)},
		{name: "ads actions without account", method: "GET", path: "/api/admin/ads/conversion-actions", key: e.admin, want: 409},

		// The account and its conversion actions.
		{name: "ads select account bad ID", method: "PUT", path: "/api/admin/ads/connection/account", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"conversionCustomerId": "12345"}},
		{name: "ads select account unknown field", method: "PUT", path: "/api/admin/ads/connection/account", key: e.admin,
			want: 400, invalidRequest: true, body: map[string]any{"conversionCustomerId": googlefake.DefaultCustomerID, "customer": "x"}},
		{name: "ads select account", method: "PUT", path: "/api/admin/ads/connection/account", key: e.admin, want: 200,
			body: account, after: expectBody(`"conversionCustomerId":"`+googlefake.DefaultCustomerID+`"`, `"disabledMappings":[]`)},
		{name: "ads connection ready", method: "GET", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: expectBody(`"ready":true`)},
		{name: "ads conversion actions", method: "GET", path: "/api/admin/ads/conversion-actions", key: e.admin, want: 200,
			after: expectBody(`"id":"` + googlefake.DefaultActionID + `"`)},
		{name: "ads refresh conversion actions", method: "POST", path: "/api/admin/ads/conversion-actions/refresh", key: e.admin,
			want: 200},

		// Mappings.
		{name: "ads create mapping bad milestone", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"sourceId": e.sourceID, "milestone": "purchase",
				"conversionActionId": googlefake.DefaultActionID, "consentConfirmed": true}},
		{name: "ads create mapping resource name", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 400,
			invalidRequest: true, body: map[string]any{"sourceId": e.sourceID, "milestone": "paid",
				"conversionActionId": "customers/1234567890/conversionActions/7723667020", "consentConfirmed": true}},
		{name: "ads create mapping unknown source", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 400,
			body: map[string]any{"sourceId": "nope", "milestone": "paid", "conversionActionId": googlefake.DefaultActionID,
				"consentConfirmed": true}},
		{name: "ads create mapping", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 201, body: newMapping,
			after: func(t *testing.T, body []byte) {
				var r struct{ Mapping struct{ MappingID string } }
				if json.Unmarshal(body, &r) != nil || r.Mapping.MappingID == "" {
					t.Fatalf("no mapping ID: %s", body)
				}
				mappingID = r.Mapping.MappingID
				expectBody(`"validationOnly":true`, `"conversionActionName":"Qualified lead (offline)"`)(t, body)
			}},
		{name: "ads create mapping twice", method: "POST", path: "/api/admin/ads/mappings", key: e.admin, want: 409, body: newMapping},
		{name: "ads mappings", method: "GET", path: "/api/admin/ads/mappings", key: e.admin, want: 200},
		{name: "ads mapping", method: "GET", pathFn: mapping(""), key: e.admin, want: 200},
		{name: "ads mapping unknown", method: "GET", path: "/api/admin/ads/mappings/nope", key: e.admin, want: 404},
		{name: "ads validation only off", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 200,
			body: map[string]any{"validationOnly": false}, after: expectBody(`"validationOnly":false`)},
		{name: "ads disable mapping", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 200,
			body: map[string]any{"enabled": false, "clearFixedValue": true}, after: expectBody(`"enabled":false`, `"disabledReason":"disabled by`)},
		{name: "ads enable mapping", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 200,
			body: map[string]any{"enabled": true, "validationOnly": true}, after: expectBody(`"enabled":true`, `"validationOnly":true`)},
		{name: "ads patch mapping nothing", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 400, invalidRequest: true,
			body: map[string]any{}},
		{name: "ads patch mapping source", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 400, invalidRequest: true,
			body: map[string]any{"sourceId": "other"}, after: expectBody("never change")},
		{name: "ads patch mapping half a value", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 400,
			body: map[string]any{"fixedValueCents": 500}},
		{name: "ads patch mapping unknown", method: "PATCH", path: "/api/admin/ads/mappings/nope", key: e.admin, want: 404,
			body: map[string]any{"enabled": false}},

		// The upload queue, as the uploader left it, and Retry.
		{name: "ads queue", method: "GET", path: "/api/admin/ads/queue", key: e.admin, want: 200,
			before: func(t *testing.T) { a.insertQueue(t, mappingID) },
			after:  expectBody(`"rowId":"uq_accepted"`, `"diagnosticsStatus":"SUCCESS"`)},
		{name: "ads queue first page", method: "GET", key: e.admin, want: 200,
			pathFn: func() string { return "/api/admin/ads/queue?limit=2&mappingId=" + mappingID },
			after:  expectBody(`"nextCursor":"`)},
		{name: "ads queue filtered", method: "GET", key: e.admin, want: 200,
			path: "/api/admin/ads/queue?status=rejected&from=" + time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)},
		{name: "ads queue bad status", method: "GET", path: "/api/admin/ads/queue?status=sent", key: e.admin, want: 400,
			invalidRequest: true},
		{name: "ads queue range reversed", method: "GET", path: "/api/admin/ads/queue?from=2026-11-02&to=2026-11-01", key: e.admin,
			want: 400},
		{name: "ads queue bad cursor", method: "GET", path: "/api/admin/ads/queue?cursor=%21%21", key: e.admin, want: 400},
		{name: "ads retry", method: "POST", path: "/api/admin/ads/queue/uq_rejected/retry", key: e.admin, want: 200,
			after: expectBody(`"status":"queued"`, `"attempts":0`)},
		{name: "ads retry accepted row", method: "POST", path: "/api/admin/ads/queue/uq_accepted/retry", key: e.admin, want: 409,
			after: expectBody(`"error":"not_retryable"`, `"reason":"not_rejected"`)},
		{name: "ads retry local reason", method: "POST", path: "/api/admin/ads/queue/uq_local/retry", key: e.admin, want: 409,
			after: expectBody(`"reason":"local_reason"`)},
		{name: "ads retry unknown row", method: "POST", path: "/api/admin/ads/queue/uq_nope/retry", key: e.admin, want: 404},

		// The verification order.
		{name: "ads verification", method: "GET", path: "/api/admin/ads/verification", key: e.admin, want: 200,
			after: expectBody(`"step":"platform_confirmed"`, `"diagnosticsStatus":"SUCCESS"`)},
		{name: "ads verification of one mapping", method: "GET", key: e.admin, want: 200,
			pathFn: func() string { return "/api/admin/ads/verification?mappingId=" + mappingID }},
		{name: "ads verification unknown mapping", method: "GET", path: "/api/admin/ads/verification?mappingId=nope", key: e.admin,
			want: 404},

		// Disconnection: Google does not confirm, then does.
		{name: "ads disconnect unconfirmed", method: "DELETE", path: "/api/admin/ads/connection", key: e.admin, want: 502,
			before: func(*testing.T) { a.fake.FailRevocation(http.StatusServiceUnavailable) },
			after: func(t *testing.T, body []byte) {
				a.fake.FailRevocation(0)
				expectBody(`"error":"revocation_unconfirmed"`)(t, body)
			}},
		{name: "ads disconnect", method: "DELETE", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: expectBody(`"state":"disconnected"`, `"sealedWithKey":""`)},
		{name: "ads connection disconnected", method: "GET", path: "/api/admin/ads/connection", key: e.admin, want: 200,
			after: expectBody(`"state":"disconnected"`, `"connection":{`)},
		{name: "ads re-enable mapping disconnected", method: "PATCH", pathFn: mapping(""), key: e.admin, want: 409,
			body: map[string]any{"enabled": true}},
	}
}

// expectBody checks that an answer contains each of want (compact JSON as the API writes it, or
// text of the callback page), and that no credential the fake issued (refresh or access token)
// is ever echoed.
func expectBody(want ...string) func(t *testing.T, body []byte) {
	return func(t *testing.T, body []byte) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				t.Errorf("the answer lacks %s: %s", w, body)
			}
		}
		for _, secret := range []string{"1//fake-", "ya29.fake-"} {
			if strings.Contains(string(body), secret) {
				t.Errorf("the answer carries a credential: %s", body)
			}
		}
	}
}
