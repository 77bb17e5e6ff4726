package google_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader/google"
)

func destination() google.Destination {
	return google.Destination{
		OperatingAccount:     google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: googlefake.DefaultCustomerID},
		LoginAccount:         &google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: googlefake.DefaultManagerID},
		ProductDestinationID: googlefake.DefaultActionID,
	}
}

func event(tx, gclid string) google.Event {
	return google.Event{
		EventTimestamp: "2026-09-01T14:03:22Z",
		TransactionID:  tx,
		AdIdentifiers:  google.AdIdentifiers{Gclid: gclid},
		EventSource:    google.EventSourceInStore,
	}
}

func minimalRequest(tx, gclid string) google.IngestRequest {
	return google.IngestRequest{Destinations: []google.Destination{destination()}, Events: []google.Event{event(tx, gclid)}}
}

// TestIngestRequestJSON pins the exact body the client sends: it is the contract with Google.
func TestIngestRequestJSON(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	req := google.IngestRequest{
		Destinations: []google.Destination{destination()},
		Events: []google.Event{
			{
				EventTimestamp:  "2026-09-01T14:03:22Z",
				TransactionID:   "rt-0123456789abcdef0123456789abcdef",
				AdIdentifiers:   google.AdIdentifiers{Gclid: "Cj0KCQjw-example"},
				ConversionValue: ptr(49.0),
				Currency:        "EUR",
				EventSource:     google.EventSourceInStore,
			},
			{
				EventTimestamp:  "2026-09-01T15:00:00.5+02:00",
				TransactionID:   "rt-fedcba9876543210fedcba9876543210",
				AdIdentifiers:   google.AdIdentifiers{Wbraid: "wbraid-example"},
				ConversionValue: ptr(0.0),
				Currency:        "USD",
				EventSource:     google.EventSourceInStore,
				Consent:         &google.Consent{AdUserData: google.ConsentDenied},
			},
		},
		Consent:      &google.Consent{AdUserData: google.ConsentGranted, AdPersonalization: google.ConsentGranted},
		ValidateOnly: true,
	}
	if _, err := e.dm.Ingest(context.Background(), ts, req); err != nil {
		t.Fatal(err)
	}
	var sent []byte
	for _, r := range e.fake.Requests() {
		if r.Path == "/v1/events:ingest" {
			sent = r.Body
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ya29.") {
				t.Errorf("authorization %q", r.Header.Get("Authorization"))
			}
		}
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, sent, "", "  "); err != nil {
		t.Fatalf("sent body is not JSON: %v", err)
	}
	pretty.WriteByte('\n')
	testenv.Golden(t, "testdata/ingest_request.golden.json", pretty.Bytes())
}

func TestIngestAndDiagnosticsSuccess(t *testing.T) {
	e := newEnv(t, func(c *googlefake.Config) { c.ProcessingDelay = 30 * time.Minute })
	_, ts := e.connect(t)
	ctx := context.Background()
	resp, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-1", "Cj0-ok-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.RequestID, "t-") {
		t.Fatalf("request ID %q", resp.RequestID)
	}
	st, err := e.dm.RetrieveStatus(ctx, ts, resp.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Destinations) != 1 || st.Destinations[0].RequestStatus != google.StatusProcessing || st.Terminal() {
		t.Fatalf("before the delay: %+v", st)
	}
	if d := st.Destinations[0]; d.RecordCount != 0 || d.Errors != nil || d.Warnings != nil {
		t.Fatalf("PROCESSING carries only the status: %+v", d)
	}
	e.clock.Advance(30 * time.Minute)
	st, err = e.dm.RetrieveStatus(ctx, ts, resp.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Destinations[0]
	if d.RequestStatus != google.StatusSuccess || d.RecordCount != 1 || len(d.Errors) != 0 || !st.Terminal() {
		t.Fatalf("after the delay: %+v", d)
	}
	if d.Destination.ProductDestinationID != googlefake.DefaultActionID || d.Destination.OperatingAccount.AccountID != googlefake.DefaultCustomerID {
		t.Fatalf("destination echo %+v", d.Destination)
	}
}

func TestDiagnosticsPartialSuccessKeepsReasonsVerbatim(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	req := minimalRequest("rt-a", "Cj0-ok-a")
	req.Events = append(req.Events,
		event("rt-b", "fake-CLICK_NOT_FOUND-b"),
		event("rt-c", "fake-CLICK_NOT_FOUND-c"),
		event("rt-d", "fake-SOMETHING_GOOGLE_ADDS_LATER-d"),
		event("rt-e", "warn-INTERNAL_ERROR-e"),
	)
	resp, err := e.dm.Ingest(ctx, ts, req)
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.dm.RetrieveStatus(ctx, ts, resp.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Destinations[0]
	if d.RequestStatus != google.StatusPartialSuccess || d.RecordCount != 5 {
		t.Fatalf("status %+v", d)
	}
	wantErrs := []google.ReasonCount{
		{Reason: "PROCESSING_ERROR_REASON_CLICK_NOT_FOUND", Count: 2},
		{Reason: "PROCESSING_ERROR_REASON_SOMETHING_GOOGLE_ADDS_LATER", Count: 1},
	}
	if !slices.Equal(d.Errors, wantErrs) {
		t.Fatalf("errors %+v", d.Errors)
	}
	if !slices.Equal(d.Warnings, []google.ReasonCount{{Reason: "PROCESSING_WARNING_REASON_INTERNAL_ERROR", Count: 1}}) {
		t.Fatalf("warnings %+v", d.Warnings)
	}
}

func TestDiagnosticsFailedOneEventRequest(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	for _, reason := range []string{"INVALID_GCLID", "EVENT_TOO_OLD", "DENIED_CONSENT", "INVALID_OPERATING_ACCOUNT_FOR_CLICK"} {
		resp, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-"+reason, "fake-"+reason+"-1"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := e.dm.RetrieveStatus(ctx, ts, resp.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		d := st.Destinations[0]
		if d.RequestStatus != google.StatusFailed || !slices.Equal(d.Errors, []google.ReasonCount{{Reason: "PROCESSING_ERROR_REASON_" + reason, Count: 1}}) {
			t.Fatalf("%s: %+v", reason, d)
		}
	}
}

func TestDuplicateTransactionID(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	first, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-dup", "Cj0-ok-1"))
	if err != nil {
		t.Fatal(err)
	}
	// The same transaction for another conversion action is not a duplicate.
	other := minimalRequest("rt-dup", "Cj0-ok-1")
	other.Destinations[0].ProductDestinationID = googlefake.DefaultActionID2
	otherResp, err := e.dm.Ingest(ctx, ts, other)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-dup", "Cj0-ok-1"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{first.RequestID: google.StatusSuccess, otherResp.RequestID: google.StatusSuccess, second.RequestID: google.StatusFailed} {
		st, err := e.dm.RetrieveStatus(ctx, ts, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Destinations[0].RequestStatus; got != want {
			t.Fatalf("%s: %s, want %s", id, got, want)
		}
	}
	st, _ := e.dm.RetrieveStatus(ctx, ts, second.RequestID)
	if !slices.Equal(st.Destinations[0].Errors, []google.ReasonCount{{Reason: "PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID", Count: 1}}) {
		t.Fatalf("errors %+v", st.Destinations[0].Errors)
	}
}

func TestValidateOnlyHasNoSideEffects(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	req := minimalRequest("rt-v", "Cj0-ok-1")
	req.ValidateOnly = true
	resp, err := e.dm.Ingest(ctx, ts, req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.dm.RetrieveStatus(ctx, ts, resp.RequestID)
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 400 || len(ae.Violations) != 1 || ae.Violations[0].Reason != "INVALID_REQUEST_ID" || google.Classify(err) != google.Permanent {
		t.Fatalf("retrieve of a validate-only request: %v", err)
	}
	// Validation did not remember the transaction: the live send is not a duplicate.
	live, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-v", "Cj0-ok-1"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.dm.RetrieveStatus(ctx, ts, live.RequestID)
	if err != nil || st.Destinations[0].RequestStatus != google.StatusSuccess {
		t.Fatalf("live after validation: %v %+v", err, st)
	}
	// Validation runs the same fast-fail checks.
	bad := minimalRequest("rt-w", "invalid-1")
	bad.ValidateOnly = true
	if _, err := e.dm.Ingest(ctx, ts, bad); google.Classify(err) != google.Permanent {
		t.Fatalf("validate-only with a bad click ID: %v", err)
	}
}

func TestFastFailNamesTheRow(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	req := minimalRequest("rt-0", "Cj0-ok-0")
	req.Events = append(req.Events, event("rt-1", "invalid-gclid"), event("rt-2", "Cj0-ok-2"))
	req.Events[2].Currency = "EURO"
	_, err := e.dm.Ingest(context.Background(), ts, req)
	var ae *google.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v", err)
	}
	if ae.HTTPStatus != 400 || ae.Status != "INVALID_ARGUMENT" || ae.Reason != "INVALID_ARGUMENT" || google.Classify(err) != google.Permanent {
		t.Fatalf("envelope %+v", ae)
	}
	want := []google.Violation{
		{Field: "events.events[1].ad_identifiers.gclid", Reason: "INVALID_FORMAT", Description: "The gclid is not in a valid format.", EventIndex: 1},
		{Field: "events.events[2].currency", Reason: "INVALID_CURRENCY_CODE", Description: `"EURO" is not an ISO 4217 currency code.`, EventIndex: 2},
	}
	if !slices.Equal(ae.Violations, want) {
		t.Fatalf("violations %+v", ae.Violations)
	}
	if !slices.Equal(ae.EventIndexes(), []int{1, 2}) || ae.RequestID == "" {
		t.Fatalf("indexes %v request ID %q", ae.EventIndexes(), ae.RequestID)
	}
	// Fast-fail: nothing of the request was accepted, so no diagnostics exist for it.
	for _, r := range e.fake.Requests() {
		if r.Path == "/v1/requestStatus:retrieve" {
			t.Fatal("unexpected retrieve")
		}
	}
}

func TestResourceNameAsConversionActionIsRejected(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	req := minimalRequest("rt-0", "Cj0-ok-0")
	req.Destinations[0].ProductDestinationID = "customers/1234567890/conversionActions/7723667020"
	_, err := e.dm.Ingest(context.Background(), ts, req)
	var ae *google.APIError
	if !errors.As(err, &ae) || len(ae.Violations) != 1 || ae.Violations[0].Reason != "INVALID_CONVERSION_ACTION_ID" || ae.Violations[0].EventIndex != -1 {
		t.Fatalf("got %v", err)
	}
}

func TestIngestRetryClasses(t *testing.T) {
	for _, tc := range []struct {
		status     int
		class      google.Class
		retryAfter time.Duration
		apiStatus  string
	}{
		{http.StatusTooManyRequests, google.Quota, 30 * time.Second, "RESOURCE_EXHAUSTED"},
		{http.StatusInternalServerError, google.Transient, 0, "INTERNAL"},
		{http.StatusServiceUnavailable, google.Transient, 0, "UNAVAILABLE"},
		{http.StatusGatewayTimeout, google.Transient, 0, "DEADLINE_EXCEEDED"},
		{http.StatusConflict, google.Transient, 0, "ABORTED"},
		{http.StatusForbidden, google.Permanent, 0, "PERMISSION_DENIED"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			e := newEnv(t)
			_, ts := e.connect(t)
			e.fake.FailIngest(tc.status, 2)
			for i := 0; i < 2; i++ {
				_, err := e.dm.Ingest(context.Background(), ts, minimalRequest("rt-1", "Cj0-ok-1"))
				var ae *google.APIError
				if !errors.As(err, &ae) || google.Classify(err) != tc.class || ae.RetryAfter != tc.retryAfter || ae.Status != tc.apiStatus {
					t.Fatalf("attempt %d: %v (class %v, retry after %v)", i, err, google.Classify(err), ae)
				}
			}
			if _, err := e.dm.Ingest(context.Background(), ts, minimalRequest("rt-1", "Cj0-ok-1")); err != nil {
				t.Fatalf("third attempt: %v", err)
			}
		})
	}
}

func TestQuotaErrorCarriesQuotaLimit(t *testing.T) {
	e := newEnv(t, func(c *googlefake.Config) { c.QuotaRetryDelay = 90 * time.Second })
	_, ts := e.connect(t)
	e.fake.FailIngest(http.StatusTooManyRequests, 1)
	_, err := e.dm.Ingest(context.Background(), ts, minimalRequest("rt-1", "Cj0-ok-1"))
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.Reason != "RATE_LIMIT_EXCEEDED" || ae.Metadata["quota_limit"] == "" || ae.RetryAfter != 90*time.Second {
		t.Fatalf("got %+v", ae)
	}
}

func TestRetrieveRetryClasses(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	resp, err := e.dm.Ingest(context.Background(), ts, minimalRequest("rt-1", "Cj0-ok-1"))
	if err != nil {
		t.Fatal(err)
	}
	e.fake.FailRetrieve(http.StatusServiceUnavailable, 1)
	if _, err := e.dm.RetrieveStatus(context.Background(), ts, resp.RequestID); google.Classify(err) != google.Transient {
		t.Fatalf("503: %v", err)
	}
	if _, err := e.dm.RetrieveStatus(context.Background(), ts, resp.RequestID); err != nil {
		t.Fatalf("after the failure: %v", err)
	}
}

func TestUnauthenticated(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.dm.Ingest(ctx, staticToken("ya29.not-issued"), minimalRequest("rt-1", "Cj0-ok-1"))
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 401 || ae.Reason != "ACCESS_TOKEN_EXPIRED" || google.Classify(err) != google.Unauthenticated {
		t.Fatalf("unknown token: %v", err)
	}
	_, err = e.dm.RetrieveStatus(ctx, staticToken(""), "t-1")
	if !errors.As(err, &ae) || ae.HTTPStatus != 401 || ae.Reason != "CREDENTIALS_MISSING" {
		t.Fatalf("missing token: %v", err)
	}

	// A token Google considers expired answers 401 although the client still holds it; a new
	// access token from the refresh token works again.
	g, _ := e.connect(t)
	e.fake.ExpireAccessTokens()
	_, err = e.dm.Ingest(ctx, staticToken(g.Token.AccessToken), minimalRequest("rt-1", "Cj0-ok-1"))
	if google.Classify(err) != google.Unauthenticated {
		t.Fatalf("expired token: %v", err)
	}
	if _, err := e.dm.Ingest(ctx, e.oauth.TokenSource(ctx, g.RefreshToken), minimalRequest("rt-1", "Cj0-ok-1")); err != nil {
		t.Fatalf("after refresh: %v", err)
	}
}

func TestIngestNeedsDataManagerScope(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t, google.ScopeAdWords)
	_, err := e.dm.Ingest(context.Background(), ts, minimalRequest("rt-1", "Cj0-ok-1"))
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 403 || ae.Reason != "ACCESS_TOKEN_SCOPE_INSUFFICIENT" || google.Classify(err) != google.Permanent {
		t.Fatalf("got %v", err)
	}
}

func TestCheckDestinations(t *testing.T) {
	e := newEnv(t, func(c *googlefake.Config) { c.CheckDestinations = true })
	_, ts := e.connect(t)
	ctx := context.Background()
	if _, err := e.dm.Ingest(ctx, ts, minimalRequest("rt-1", "Cj0-ok-1")); err != nil {
		t.Fatalf("valid destination: %v", err)
	}
	noLogin := minimalRequest("rt-2", "Cj0-ok-2")
	noLogin.Destinations[0].LoginAccount = nil
	_, err := e.dm.Ingest(ctx, ts, noLogin)
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 403 || google.Classify(err) != google.Permanent {
		t.Fatalf("client without its manager login: %v", err)
	}
	webpage := minimalRequest("rt-3", "Cj0-ok-3")
	webpage.Destinations[0].ProductDestinationID = "7723667099"
	if _, err := e.dm.Ingest(ctx, ts, webpage); !errors.As(err, &ae) || ae.Violations[0].Reason != "INVALID_CONVERSION_ACTION_TYPE" {
		t.Fatalf("webpage action: %v", err)
	}
	unknown := minimalRequest("rt-4", "Cj0-ok-4")
	unknown.Destinations[0].ProductDestinationID = "1"
	if _, err := e.dm.Ingest(ctx, ts, unknown); !errors.As(err, &ae) || ae.Violations[0].Reason != "INVALID_CONVERSION_ACTION_ID" {
		t.Fatalf("unknown action: %v", err)
	}
}

func TestRetrieveStatusEmptyID(t *testing.T) {
	dm := google.NewDataManager("http://127.0.0.1:1", nil)
	if _, err := dm.RetrieveStatus(context.Background(), staticToken("x"), ""); err == nil {
		t.Fatal("want an error")
	}
}
