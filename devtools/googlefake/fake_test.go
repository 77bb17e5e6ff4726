package googlefake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader/google"
)

type envelope struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type            string `json:"@type"`
			FieldViolations []struct {
				Field, Reason, Description string
			} `json:"fieldViolations"`
		} `json:"details"`
	} `json:"error"`
}

func violations(t *testing.T, r response) []string {
	t.Helper()
	var env envelope
	r.json(t, &env)
	var out []string
	for _, d := range env.Error.Details {
		for _, v := range d.FieldViolations {
			out = append(out, v.Field+" "+v.Reason)
		}
	}
	return out
}

func TestFastFailValidation(t *testing.T) {
	h := start(t)
	tok, _ := h.token()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"account id", `"1234567890"`, `"12345"`, "destinations[0].operating_account.account_id INVALID_NUMBER_FORMAT"},
		{"account type", `"accountType": "GOOGLE_ADS", "accountId": "1234567890"`, `"accountId": "1234567890"`, "destinations[0].operating_account.account_type REQUIRED_FIELD_MISSING"},
		{"account type enum", `"accountType": "GOOGLE_ADS", "accountId": "1234567890"`, `"accountType": "ADWORDS", "accountId": "1234567890"`, "destinations[0].operating_account.account_type INVALID_ENUM_VALUE"},
		{"resource name", `"7723667020"`, `"customers/1234567890/conversionActions/7723667020"`, "destinations[0].product_destination_id INVALID_CONVERSION_ACTION_ID"},
		{"no timestamp", `"eventTimestamp": "2026-09-01T14:03:22Z", `, ``, "events.events[0].event_timestamp REQUIRED_FIELD_MISSING"},
		{"ads timestamp format", `"2026-09-01T14:03:22Z"`, `"2026-09-01 14:03:22+00:00"`, "events.events[0].event_timestamp INVALID_FORMAT"},
		{"no identifier", `{"gclid": "Cj0KCQ-ok"}`, `{}`, "events.events[0] NO_IDENTIFIERS_PROVIDED"},
		{"invalid click", `"Cj0KCQ-ok"`, `"invalid-x"`, "events.events[0].ad_identifiers.gclid INVALID_FORMAT"},
		{"currency", `"EUR"`, `"eur"`, "events.events[0].currency INVALID_CURRENCY_CODE"},
		{"currency unknown", `"EUR"`, `"XYZ"`, "events.events[0].currency INVALID_CURRENCY_CODE"},
		{"event source", `"IN_STORE"`, `"INSTORE"`, "events.events[0].event_source INVALID_ENUM_VALUE"},
		{"ads consent spelling", `"adUserData": "CONSENT_GRANTED"`, `"adUserData": "GRANTED"`, "consent.ad_user_data INVALID_ENUM_VALUE"},
		{"destination reference", `"eventSource": "IN_STORE"`, `"eventSource": "IN_STORE", "destinationReferences": ["nope"]`, "events.events[0].destination_references[0] INVALID_DESTINATION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(validBody, tc.old, tc.new, 1)
			if body == validBody {
				t.Fatal("replacement did not apply")
			}
			r := h.ingest(tok, body)
			if r.status != 400 {
				t.Fatalf("status %d %s", r.status, r.body)
			}
			if got := violations(t, r); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("violations %v, want %q", got, tc.want)
			}
		})
	}
}

func TestTooManyEventsAndDestinations(t *testing.T) {
	h := start(t)
	tok, _ := h.token()
	var req map[string]any
	if err := json.Unmarshal([]byte(validBody), &req); err != nil {
		t.Fatal(err)
	}
	ev := req["events"].([]any)[0]
	events := make([]any, 2001)
	for i := range events {
		events[i] = ev
	}
	req["events"] = events
	b, _ := json.Marshal(req)
	if got := violations(t, h.ingest(tok, string(b))); len(got) != 1 || got[0] != "events TOO_MANY_EVENTS" {
		t.Fatalf("2001 events: %v", got)
	}
	req["events"] = events[:2000]
	dest := req["destinations"].([]any)[0].(map[string]any)
	dests := make([]any, 11)
	for i := range dests {
		d := map[string]any{}
		for k, v := range dest {
			d[k] = v
		}
		d["reference"] = fmt.Sprintf("d%d", i)
		dests[i] = d
	}
	req["destinations"] = dests
	b, _ = json.Marshal(req)
	if got := violations(t, h.ingest(tok, string(b))); len(got) != 1 || got[0] != "destinations TOO_MANY_DESTINATIONS" {
		t.Fatalf("11 destinations: %v", got)
	}
	req["destinations"] = dests[:10]
	b, _ = json.Marshal(req)
	if r := h.ingest(tok, string(b)); r.status != 200 {
		t.Fatalf("2000 events to 10 destinations: %d %s", r.status, r.body)
	}
	req["destinations"] = []any{}
	b, _ = json.Marshal(req)
	if got := violations(t, h.ingest(tok, string(b))); len(got) != 1 || got[0] != "destinations REQUIRED_FIELD_MISSING" {
		t.Fatalf("no destinations: %v", got)
	}
	delete(req, "events")
	req["destinations"] = dests[:1]
	b, _ = json.Marshal(req)
	if got := violations(t, h.ingest(tok, string(b))); len(got) != 1 || got[0] != "events REQUIRED_FIELD_MISSING" {
		t.Fatalf("no events: %v", got)
	}
}

func TestDuplicateDestinationReference(t *testing.T) {
	h := start(t)
	tok, _ := h.token()
	body := strings.Replace(validBody, `"productDestinationId": "7723667020"}]`,
		`"productDestinationId": "7723667020", "reference": "a"}, {"operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": "1234567890"}, "productDestinationId": "7723667021", "reference": "a"}]`, 1)
	if got := violations(t, h.ingest(tok, body)); len(got) != 1 || got[0] != "destinations[1].reference DUPLICATE_DESTINATION_REFERENCE" {
		t.Fatalf("got %v", got)
	}
}

func TestProtoFieldNamesAreAcceptedUnknownNamesAreNot(t *testing.T) {
	h := start(t)
	tok, _ := h.token()
	snake := strings.NewReplacer(`"transactionId"`, `"transaction_id"`, `"adIdentifiers"`, `"ad_identifiers"`, `"validateOnly"`, `"validate_only"`).Replace(validBody)
	if r := h.ingest(tok, snake); r.status != 200 {
		t.Fatalf("snake_case names: %d %s", r.status, r.body)
	}
	for name, body := range map[string]string{
		"top level":  strings.Replace(validBody, `"consent": {"adUserData"`, `"partialFailure": true, "consent": {"adUserData"`, 1),
		"nested":     strings.Replace(validBody, `"gclid"`, `"gclId"`, 1),
		"ads naming": strings.Replace(validBody, `"eventTimestamp"`, `"conversionDateTime"`, 1),
	} {
		r := h.ingest(tok, body)
		var env envelope
		r.json(t, &env)
		if r.status != 400 || !strings.HasPrefix(env.Error.Message, "Invalid JSON payload received. Unknown name") {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// Optional messages the uploader never sends are accepted whole.
	extra := strings.Replace(validBody, `"eventSource": "IN_STORE"`, `"eventSource": "IN_STORE", "cartData": {"items": []}, "userData": {"userIdentifiers": [{"emailAddress": "x"}]}`, 1)
	if r := h.ingest(tok, extra); r.status != 200 || strings.Contains(string(r.body), "fieldWarnings") {
		t.Fatalf("optional messages: %d %s", r.status, r.body)
	}
	braid := strings.Replace(extra, `"gclid": "Cj0KCQ-ok"`, `"wbraid": "wb-ok"`, 1)
	r := h.ingest(tok, braid)
	if r.status != 200 || !strings.Contains(string(r.body), `"field": "events[0].cart_data"`) {
		t.Fatalf("cart data with wbraid: %d %s", r.status, r.body)
	}
	if r := h.ingest(tok, `{"destinations": [`); r.status != 400 {
		t.Fatalf("broken JSON: %d", r.status)
	}
}

func TestDiagnosticsLifecycle(t *testing.T) {
	h := start(t, func(c *googlefake.Config) { c.ProcessingDelay = 30 * time.Minute })
	tok, _ := h.token()
	body := strings.Replace(validBody, `"events": [`, `"events": [
		{"eventTimestamp": "2026-09-01T14:03:22Z", "adIdentifiers": {"gbraid": "fake-TOO_RECENT_CLICK-1"}},
		{"eventTimestamp": "2026-09-01T14:03:22Z", "adIdentifiers": {"wbraid": "fake-NO_CONSENT-2"}},`, 1)
	r := h.ingest(tok, body)
	var accepted struct{ RequestID string }
	r.json(t, &accepted)
	retrieve := func() string {
		r := h.do(http.MethodGet, "/v1/requestStatus:retrieve?requestId="+url.QueryEscape(accepted.RequestID), bearer(tok), "")
		if r.status != 200 {
			t.Fatalf("retrieve: %d %s", r.status, r.body)
		}
		var compact strings.Builder
		for _, line := range strings.Split(string(r.body), "\n") {
			compact.WriteString(strings.TrimSpace(line))
		}
		return compact.String()
	}
	if got, want := retrieve(), `{"requestStatusPerDestination": [{"destination": {"operatingAccount": {"accountType": "GOOGLE_ADS","accountId": "1234567890"},"loginAccount": {"accountType": "GOOGLE_ADS","accountId": "9876543210"},"productDestinationId": "7723667020"},"requestStatus": "PROCESSING"}]}`; got != want {
		t.Fatalf("processing:\n got %s\nwant %s", got, want)
	}
	h.clock.Advance(30 * time.Minute)
	want := `{"requestStatusPerDestination": [{"destination": {"operatingAccount": {"accountType": "GOOGLE_ADS","accountId": "1234567890"},"loginAccount": {"accountType": "GOOGLE_ADS","accountId": "9876543210"},"productDestinationId": "7723667020"},"requestStatus": "PARTIAL_SUCCESS","eventsIngestionStatus": {"recordCount": "3"},"errorInfo": {"errorCounts": [{"recordCount": "1","reason": "PROCESSING_ERROR_REASON_TOO_RECENT_CLICK"},{"recordCount": "1","reason": "PROCESSING_ERROR_REASON_NO_CONSENT"}]}}]}`
	if got := retrieve(); got != want {
		t.Fatalf("terminal:\n got %s\nwant %s", got, want)
	}
}

func TestTokenEndpoint(t *testing.T) {
	h := start(t)
	creds := url.Values{"client_id": {"revtrack-local"}, "client_secret": {"revtrack-local-secret"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, vs := range creds {
			v[k] = vs
		}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	code := h.fake.IssueCode(google.ScopeDataManager)
	r := h.form("/token", with("grant_type", "authorization_code", "code", code))
	var tok struct {
		AccessToken, RefreshToken, Scope, TokenType string
		ExpiresIn                                   int
	}
	var raw map[string]any
	r.json(t, &raw)
	tok.Scope, _ = raw["scope"].(string)
	tok.RefreshToken, _ = raw["refresh_token"].(string)
	if r.status != 200 || tok.Scope != google.ScopeDataManager || tok.RefreshToken == "" || raw["expires_in"] != 3599.0 || raw["token_type"] != "Bearer" {
		t.Fatalf("exchange: %d %s", r.status, r.body)
	}
	if r := h.form("/token", with("grant_type", "authorization_code", "code", code)); r.status != 400 || !strings.Contains(string(r.body), "invalid_grant") {
		t.Fatalf("reused code: %d %s", r.status, r.body)
	}
	r = h.form("/token", with("grant_type", "refresh_token", "refresh_token", tok.RefreshToken))
	raw = nil
	r.json(t, &raw)
	if r.status != 200 || raw["refresh_token"] != nil || raw["scope"] != google.ScopeDataManager {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	// Client credentials may also come as HTTP basic auth.
	req := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
	hdr := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	hdr.Set("Authorization", "Basic cmV2dHJhY2stbG9jYWw6cmV2dHJhY2stbG9jYWwtc2VjcmV0")
	if r := h.do(http.MethodPost, "/token", hdr, req.Encode()); r.status != 200 {
		t.Fatalf("basic auth: %d %s", r.status, r.body)
	}
	if r := h.form("/token", with("grant_type", "password")); r.status != 400 || !strings.Contains(string(r.body), "unsupported_grant_type") {
		t.Fatalf("password grant: %d %s", r.status, r.body)
	}
	// A code expires.
	late := h.fake.IssueCode()
	h.clock.Advance(11 * time.Minute)
	if r := h.form("/token", with("grant_type", "authorization_code", "code", late)); r.status != 400 {
		t.Fatalf("expired code: %d %s", r.status, r.body)
	}
}

func TestAuthorizeEndpoint(t *testing.T) {
	h := start(t, func(c *googlefake.Config) { c.GrantedScopes = []string{google.ScopeAdWords} })
	q := url.Values{"client_id": {"revtrack-local"}, "redirect_uri": {"https://app.example/cb?x=1"}, "response_type": {"code"},
		"scope": {google.ScopeDataManager + " " + google.ScopeAdWords}, "state": {"s1"}, "access_type": {"offline"},
		"code_challenge": {"abc"}, "code_challenge_method": {"plain"}}
	r := h.do(http.MethodGet, "/o/oauth2/v2/auth?"+q.Encode(), nil, "")
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != 302 || loc.Host != "app.example" || loc.Query().Get("x") != "1" || loc.Query().Get("state") != "s1" || loc.Query().Get("scope") != google.ScopeAdWords {
		t.Fatalf("authorize: %d %s", r.status, loc)
	}
	// PKCE plain: the verifier is the challenge.
	tr := h.form("/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {"revtrack-local"},
		"client_secret": {"revtrack-local-secret"}, "redirect_uri": {"https://app.example/cb?x=1"}, "code_verifier": {"abc"}})
	if tr.status != 200 {
		t.Fatalf("exchange: %d %s", tr.status, tr.body)
	}
	q.Set("scope", google.ScopeDataManager)
	r = h.do(http.MethodGet, "/o/oauth2/v2/auth?"+q.Encode(), nil, "")
	loc, _ = url.Parse(r.header.Get("Location"))
	if loc.Query().Get("error") != "access_denied" {
		t.Fatalf("nothing granted: %s", loc)
	}
	q.Set("client_id", "other")
	if r := h.do(http.MethodGet, "/o/oauth2/v2/auth?"+q.Encode(), nil, ""); r.status != 401 {
		t.Fatalf("unknown client: %d", r.status)
	}
}

func TestRevocationEndsTheGrant(t *testing.T) {
	h := start(t)
	access, refresh := h.token()
	second := h.form("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh},
		"client_id": {"revtrack-local"}, "client_secret": {"revtrack-local-secret"}})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	second.json(t, &tok)
	// Revoking an access token revokes the refresh token and every access token of the grant.
	if r := h.do(http.MethodPost, "/revoke?token="+url.QueryEscape(tok.AccessToken), nil, ""); r.status != 200 {
		t.Fatalf("revoke by query: %d %s", r.status, r.body)
	}
	if !h.fake.Revoked(refresh) || !h.fake.Revoked(access) {
		t.Fatal("grant not revoked")
	}
	if r := h.ingest(access, validBody); r.status != 401 {
		t.Fatalf("ingest with revoked token: %d", r.status)
	}
	if h.fake.Revoked("unknown") {
		t.Fatal("unknown token reported revoked")
	}
	// RevokeGrant simulates the user removing access in their Google account.
	_, other := h.token()
	if !h.fake.RevokeGrant(other) || !h.fake.Revoked(other) {
		t.Fatal("RevokeGrant")
	}
}

func TestSearchStub(t *testing.T) {
	h := start(t, func(c *googlefake.Config) { c.SearchPageSize = 1 })
	tok, _ := h.token()
	login := bearer(tok)
	login.Set("login-customer-id", googlefake.DefaultManagerID)
	search := func(body string) response {
		return h.do(http.MethodPost, "/v26/customers/1234567890/googleAds:search", login, body)
	}
	r := search(`{"query": "SELECT conversion_action.id, conversion_action.name FROM conversion_action WHERE conversion_action.type IN ('UPLOAD_CLICKS', 'WEBPAGE') AND conversion_action.status = ENABLED ORDER BY conversion_action.id DESC LIMIT 2"}`)
	var page struct {
		Results []struct {
			ConversionAction map[string]any `json:"conversionAction"`
		}
		NextPageToken, FieldMask string
	}
	r.json(t, &page)
	if r.status != 200 || len(page.Results) != 1 || page.Results[0].ConversionAction["id"] != "7723667099" || page.FieldMask != "conversionAction.id,conversionAction.name" || page.NextPageToken == "" {
		t.Fatalf("page 1: %d %s", r.status, r.body)
	}
	if rn := page.Results[0].ConversionAction["resourceName"]; rn != "customers/1234567890/conversionActions/7723667099" {
		t.Fatalf("resource name %v", rn)
	}
	q := `SELECT conversion_action.id, conversion_action.name FROM conversion_action WHERE conversion_action.type IN ('UPLOAD_CLICKS', 'WEBPAGE') AND conversion_action.status = ENABLED ORDER BY conversion_action.id DESC LIMIT 2`
	r = search(fmt.Sprintf(`{"query": %q, "pageToken": %q}`, q, page.NextPageToken))
	page.NextPageToken = ""
	r.json(t, &page)
	if r.status != 200 || len(page.Results) != 1 || page.Results[0].ConversionAction["id"] != "7723667021" || page.NextPageToken != "" {
		t.Fatalf("page 2: %d %s", r.status, r.body)
	}
	for name, body := range map[string]string{
		"page size":   `{"query": "SELECT conversion_action.id FROM conversion_action", "pageSize": 10}`,
		"bad token":   `{"query": "SELECT conversion_action.id FROM conversion_action", "pageToken": "garbage"}`,
		"other query": fmt.Sprintf(`{"query": "SELECT conversion_action.id FROM conversion_action", "pageToken": %q}`, page.NextPageToken+"x"),
		"resource":    `{"query": "SELECT campaign.id FROM campaign"}`,
		"syntax":      `{"query": "SELECT FROM"}`,
		"where field": `{"query": "SELECT conversion_action.id FROM conversion_action WHERE campaign.id = 1"}`,
	} {
		if r := search(body); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	r = h.do(http.MethodPost, "/v26/customers/9876543210/googleAds:search", bearer(tok),
		`{"query": "SELECT customer.id, customer.conversion_tracking_setting.google_ads_conversion_customer FROM customer"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"googleAdsConversionCustomer": "customers/9876543210"`) {
		t.Fatalf("customer query: %d %s", r.status, r.body)
	}
	if r := h.do(http.MethodPost, "/v26/customers/12345/googleAds:search", bearer(tok), `{"query": "SELECT customer.id FROM customer"}`); r.status != 400 {
		t.Fatalf("malformed customer ID: %d", r.status)
	}
	if r := h.do(http.MethodGet, "/latest/customers:listAccessibleCustomers", bearer(tok), ""); r.status != 404 {
		t.Fatalf("bad version: %d", r.status)
	}
}

func TestRequestsAreRecorded(t *testing.T) {
	h := start(t)
	tok, _ := h.token()
	h.ingest(tok, validBody)
	var found bool
	for _, r := range h.fake.Requests() {
		if r.Path == "/v1/events:ingest" {
			found = string(r.Body) == validBody && r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer "+tok
		}
	}
	if !found {
		t.Fatal("ingest not recorded with its body")
	}
}

// TestConcurrentUse runs ingests, retrievals, refreshes and revocations at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	h := start(t)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			access, refresh := h.token()
			for i := 0; i < 10; i++ {
				body := strings.Replace(validBody, `"rt-1"`, fmt.Sprintf(`"rt-%d-%d"`, w, i), 1)
				r := h.ingest(access, body)
				var acc struct{ RequestID string }
				if err := json.Unmarshal(r.body, &acc); err != nil || r.status != 200 {
					errs <- fmt.Sprintf("ingest %d: %s", r.status, r.body)
					return
				}
				st := h.do(http.MethodGet, "/v1/requestStatus:retrieve?requestId="+acc.RequestID, bearer(access), "")
				if st.status != 200 || !strings.Contains(string(st.body), `"SUCCESS"`) {
					errs <- fmt.Sprintf("retrieve %d: %s", st.status, st.body)
					return
				}
				_ = h.fake.Requests()
			}
			if r := h.form("/revoke", url.Values{"token": {refresh}}); r.status != 200 {
				errs <- fmt.Sprintf("revoke %d", r.status)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The consent names its Google user in the ID token when the sign-in scopes are asked; SignIn
// changes the user of later consents.
func TestIDTokenNamesTheSignedInAccount(t *testing.T) {
	h := start(t)
	other := google.Account{ID: "104592000000000000002", Email: "someone-else@example.com"}
	for _, want := range []google.Account{googlefake.DefaultAccount, other} {
		h.fake.SignIn(want)
		o := google.NewOAuth("revtrack-local", "revtrack-local-secret", "https://app.example/cb", google.EndpointsAt(h.srv.URL), h.srv.Client())
		noFollow := *h.srv.Client()
		noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := noFollow.Get(o.AuthCodeURL("s", ""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		g, err := o.Exchange(context.Background(), loc.Query().Get("code"), "")
		if err != nil || g.Account != want {
			t.Fatalf("signed in as %+v: grant account %+v %v", want, g.Account, err)
		}
	}
}
