package google_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader/google"
)

func TestAccessibleCustomersAndClients(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	ids, err := e.ads.AccessibleCustomers(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{googlefake.DefaultManagerID}) {
		t.Fatalf("accessible %v", ids)
	}
	clients, err := e.ads.CustomerClients(ctx, ts, googlefake.DefaultManagerID)
	if err != nil {
		t.Fatal(err)
	}
	want := []google.CustomerClient{
		{ID: googlefake.DefaultManagerID, Name: "Local manager", Manager: true, Level: 0, Status: "ENABLED"},
		{ID: googlefake.DefaultCustomerID, Name: "Local advertiser", Level: 1, Status: "ENABLED"},
	}
	if !slices.Equal(clients, want) {
		t.Fatalf("clients %+v", clients)
	}
}

func TestConversionActionsThroughManager(t *testing.T) {
	e := newEnv(t)
	_, ts := e.connect(t)
	ctx := context.Background()
	got, err := e.ads.ConversionActions(ctx, ts, "123-456-7890", googlefake.DefaultManagerID)
	if err != nil {
		t.Fatal(err)
	}
	want := []google.ConversionAction{
		{ID: googlefake.DefaultActionID, Name: "Qualified lead (offline)", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "QUALIFIED_LEAD", OwnerCustomerID: googlefake.DefaultCustomerID},
		{ID: googlefake.DefaultActionID2, Name: "Purchase (offline)", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "PURCHASE", OwnerCustomerID: googlefake.DefaultCustomerID},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("actions %+v", got)
	}
	var search *googlefake.RecordedRequest
	for _, r := range e.fake.Requests() {
		if r.Method == "POST" && r.Path == "/v26/customers/1234567890/googleAds:search" {
			search = &r
		}
	}
	if search == nil || search.Header.Get("login-customer-id") != googlefake.DefaultManagerID || search.Header.Get("developer-token") != "" {
		t.Fatalf("search request %+v", search)
	}

	// Without the manager as login customer, Google refuses a client reached through it.
	_, err = e.ads.ConversionActions(ctx, ts, googlefake.DefaultCustomerID, "")
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 403 || ae.Reason != "USER_PERMISSION_DENIED" || google.Classify(err) != google.Permanent {
		t.Fatalf("without login customer: %v", err)
	}
}

func TestConversionActionsPagination(t *testing.T) {
	e := newEnv(t, func(c *googlefake.Config) {
		c.SearchPageSize = 2
		c.Customers = []googlefake.Customer{{ID: "5555555555", Name: "Direct", Actions: []google.ConversionAction{
			{ID: "1", Name: "a", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "DEFAULT"},
			{ID: "2", Name: "b", Status: "REMOVED", Type: "UPLOAD_CLICKS", Category: "DEFAULT"},
			{ID: "3", Name: "c", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "DEFAULT"},
			{ID: "4", Name: "d", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "DEFAULT"},
			{ID: "9223372036854775807", Name: "e", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "DEFAULT"},
		}}}
	})
	_, ts := e.connect(t)
	got, err := e.ads.ConversionActions(context.Background(), ts, "5555555555", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []string{"1", "3", "4", "9223372036854775807"}) {
		t.Fatalf("ids %v", ids)
	}
	pages := 0
	for _, r := range e.fake.Requests() {
		if r.Path == "/v26/customers/5555555555/googleAds:search" {
			pages++
		}
	}
	if pages != 2 {
		t.Fatalf("%d search requests, want 2", pages)
	}
}

func TestAdsUnauthenticated(t *testing.T) {
	e := newEnv(t)
	_, err := e.ads.AccessibleCustomers(context.Background(), staticToken("ya29.bogus"))
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 401 || ae.Reason != "OAUTH_TOKEN_INVALID" || google.Classify(err) != google.Unauthenticated || ae.RequestID == "" {
		t.Fatalf("got %v", err)
	}
}

func TestNormalizeCustomerID(t *testing.T) {
	for in, want := range map[string]string{"123-456-7890": "1234567890", " 1234567890 ": "1234567890"} {
		if got, err := google.NormalizeCustomerID(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"", "123", "12345678901", "customers/1234567890", "12345678ab"} {
		if _, err := google.NormalizeCustomerID(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
