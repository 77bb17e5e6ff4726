package google_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/uploader/google"
)

func TestEventIndex(t *testing.T) {
	for field, want := range map[string]int{
		"events[3].ad_identifiers.gclid":           3,
		"events.events[12].ad_identifiers.gclid":   12,
		"events[0]":                                0,
		"events":                                   -1,
		"destinations[0].login_account.account_id": -1,
		"":                                      -1,
		"userEvents[2]":                         -1,
		"events.events[7].consent.ad_user_data": 7,
	} {
		if got := google.EventIndex(field); got != want {
			t.Errorf("%q: %d, want %d", field, got, want)
		}
	}
}

// answer serves one canned response and calls the data manager client against it.
func answer(t *testing.T, status int, header http.Header, body string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	dm := google.NewDataManager(srv.URL, srv.Client())
	_, err := dm.Ingest(context.Background(), staticToken("tok"), minimalRequest("rt", "g"))
	return err
}

func TestParseEnvelopeToleratesUnknownDetailsAndReasons(t *testing.T) {
	err := answer(t, 400, nil, `{"error":{"code":400,"message":"m","status":"FAILED_PRECONDITION","details":[
		{"@type":"type.googleapis.com/google.rpc.Help","links":[{"url":"x"}]},
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SOMETHING_NEW","domain":"datamanager.googleapis.com","metadata":{"requestId":"t-9"}},
		{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[
			{"field":"events[4].adIdentifiers.gclid","reason":"A_REASON_FROM_THE_FUTURE","description":"d"},
			{"field":"destinations[0]","reason":"INVALID_DESTINATION"}]},
		"not an object"]}}`)
	var ae *google.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v", err)
	}
	if ae.Status != "FAILED_PRECONDITION" || ae.Reason != "SOMETHING_NEW" || ae.RequestID != "t-9" || google.Classify(err) != google.Permanent {
		t.Fatalf("%+v", ae)
	}
	want := []google.Violation{
		{Field: "events[4].adIdentifiers.gclid", Reason: "A_REASON_FROM_THE_FUTURE", Description: "d", EventIndex: 4},
		{Field: "destinations[0]", Reason: "INVALID_DESTINATION", EventIndex: -1},
	}
	if !slices.Equal(ae.Violations, want) {
		t.Fatalf("violations %+v", ae.Violations)
	}
}

func TestParseNonJSONErrorBody(t *testing.T) {
	err := answer(t, 502, nil, "<html><body>Bad Gateway</body></html>")
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.Status != "INTERNAL" || ae.Message == "" || google.Classify(err) != google.Transient {
		t.Fatalf("got %v", err)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	err := answer(t, 429, http.Header{"Retry-After": {"120"}}, `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`)
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.RetryAfter != 2*time.Minute || google.Classify(err) != google.Quota {
		t.Fatalf("got %+v", ae)
	}
	// RetryInfo wins over the header.
	err = answer(t, 429, http.Header{"Retry-After": {"120"}}, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
		{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}}`)
	if !errors.As(err, &ae) || ae.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("got %+v", ae)
	}
}

func TestGoogleAdsFailureDetail(t *testing.T) {
	err := answer(t, 429, nil, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[
		{"@type":"type.googleapis.com/google.ads.googleads.v27.errors.GoogleAdsFailure","errors":[
			{"errorCode":{"quotaError":"RESOURCE_TEMPORARILY_EXHAUSTED"},"message":"Too many requests.",
			 "details":{"quotaErrorDetails":{"rateScope":"DEVELOPER","rateName":"Number of operations","retryDelay":"45s"}}}],
		 "requestId":"abc"}]}}`)
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.Reason != "RESOURCE_TEMPORARILY_EXHAUSTED" || ae.RetryAfter != 45*time.Second || ae.RequestID != "abc" {
		t.Fatalf("got %+v", ae)
	}
}

func TestNotFoundAndClassesByStatus(t *testing.T) {
	for status, want := range map[int]google.Class{
		400: google.Permanent, 401: google.Unauthenticated, 403: google.Permanent, 404: google.Permanent,
		409: google.Transient, // no status in the body: read as ABORTED
		429: google.Quota, 500: google.Transient, 502: google.Transient, 503: google.Transient, 504: google.Transient,
	} {
		if got := google.Classify(answer(t, status, nil, "")); got != want {
			t.Errorf("%d: %v, want %v", status, got, want)
		}
	}
	err := answer(t, 409, nil, `{"error":{"code":409,"message":"exists","status":"ALREADY_EXISTS"}}`)
	if google.Classify(err) != google.Permanent {
		t.Errorf("409 ALREADY_EXISTS: %v", google.Classify(err))
	}
}

func TestClassifyOtherErrors(t *testing.T) {
	if google.Classify(nil) != 0 {
		t.Fatal("nil")
	}
	if c := google.Classify(fmt.Errorf("wrapped: %w", google.ErrInvalidGrant)); c != google.Unauthenticated {
		t.Fatalf("invalid grant: %v", c)
	}
	if c := google.Classify(errors.New("dial tcp: connection refused")); c != google.Transient {
		t.Fatalf("network: %v", c)
	}
	if c := google.Classify(context.DeadlineExceeded); c != google.Transient {
		t.Fatalf("deadline: %v", c)
	}
	re := &oauth2.RetrieveError{Response: &http.Response{StatusCode: 503}}
	if c := google.Classify(re); c != google.Transient {
		t.Fatalf("token endpoint 503: %v", c)
	}
	re = &oauth2.RetrieveError{Response: &http.Response{StatusCode: 401}, ErrorCode: "invalid_client"}
	if c := google.Classify(re); c != google.Permanent {
		t.Fatalf("invalid_client: %v", c)
	}
}

func TestNetworkErrorIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	dm := google.NewDataManager(srv.URL, nil)
	_, err := dm.Ingest(context.Background(), staticToken("tok"), minimalRequest("rt", "g"))
	if err == nil || google.Classify(err) != google.Transient {
		t.Fatalf("got %v", err)
	}
}

func TestFieldWarningsNameTheRow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"requestId":"t-1","fieldWarnings":[{"reason":"WARNING_REASON_NEW_ONE","description":"d","field":"events[3].cart_data"},{"reason":"WARNING_REASON_GENERIC","field":"consent"}]}`)
	}))
	defer srv.Close()
	resp, err := google.NewDataManager(srv.URL, srv.Client()).Ingest(context.Background(), staticToken("tok"), minimalRequest("rt", "g"))
	if err != nil {
		t.Fatal(err)
	}
	want := []google.FieldWarning{
		{Reason: "WARNING_REASON_NEW_ONE", Description: "d", Field: "events[3].cart_data", EventIndex: 3},
		{Reason: "WARNING_REASON_GENERIC", Field: "consent", EventIndex: -1},
	}
	if resp.RequestID != "t-1" || !slices.Equal(resp.FieldWarnings, want) {
		t.Fatalf("%+v", resp)
	}
}

func TestCountsAcceptStringsAndNumbers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"requestStatusPerDestination":[
			{"requestStatus":"FAILED","eventsIngestionStatus":{"recordCount":"9007199254740993"},
			 "errorInfo":{"errorCounts":[{"recordCount":3,"reason":"PROCESSING_ERROR_REASON_NO_CONSENT"}]},"somethingNew":{}},
			{"eventsIngestionStatus":{}}]}`)
	}))
	defer srv.Close()
	st, err := google.NewDataManager(srv.URL, srv.Client()).RetrieveStatus(context.Background(), staticToken("tok"), "t-1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Destinations[0].RecordCount != 9007199254740993 || st.Destinations[0].Errors[0].Count != 3 {
		t.Fatalf("%+v", st.Destinations[0])
	}
	if st.Destinations[1].RequestStatus != google.StatusUnknown || st.Terminal() {
		t.Fatalf("%+v", st.Destinations[1])
	}
}
