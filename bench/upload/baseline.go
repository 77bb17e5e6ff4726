package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader/google"
)

// baselineResult is the fake Google's events:ingest throughput through the uploader's own Google
// client (uploader/google) alone: one request at a time, as the dispatcher sends a workspace's
// requests, with the workspace's stored credential, no Kafka, no ClickHouse, no queue.
type baselineResult struct {
	Requests, PerRequest int
	ValidateOnly         bool
	Took                 time.Duration
	Lat                  []time.Duration // per request, sorted
}

func (b baselineResult) RequestsPerSec() float64 {
	if b.Took <= 0 {
		return 0
	}
	return float64(b.Requests) / b.Took.Seconds()
}

func (b baselineResult) EventsPerSec() float64 { return b.RequestsPerSec() * float64(b.PerRequest) }

// baseline sends requests of perRequest events each (after one unmeasured request of the same
// size), with unique transaction IDs, to the destination the mappings use.
func (e *uploadEnv) baseline(ctx context.Context, tag string, requests, perRequest int, validateOnly bool) (baselineResult, error) {
	res := baselineResult{Requests: requests, PerRequest: perRequest, ValidateOnly: validateOnly}
	refresh, err := e.store.AdConnections(e.keys).RefreshToken(ctx, e.ws)
	if err != nil {
		return res, fmt.Errorf("refresh token: %w", err)
	}
	ep := e.connect.Endpoints()
	ts := google.NewOAuth(e.connect.OAuthClientID, e.connect.OAuthClientSecret, e.connect.RedirectURL(e.st.Revtrack.BaseURL), ep, nil).
		TokenSource(ctx, refresh)
	dm := google.NewDataManager(ep.DataManagerURL, nil)
	at := time.Now().UTC().Format(time.RFC3339)
	request := func(r int) google.IngestRequest {
		events := make([]google.Event, perRequest)
		for i := range events {
			v := 49.0
			events[i] = google.Event{EventTimestamp: at, TransactionID: fmt.Sprintf("rt-bench-%s-%d-%d", tag, r, i),
				AdIdentifiers:   google.AdIdentifiers{Gclid: fmt.Sprintf("Cj0KCQ-%s-%d-%d", tag, r, i)},
				ConversionValue: &v, Currency: "USD", EventSource: "IN_STORE"}
		}
		return google.IngestRequest{
			Destinations: []google.Destination{{
				OperatingAccount:     google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: googlefake.DefaultCustomerID},
				LoginAccount:         &google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: googlefake.DefaultManagerID},
				ProductDestinationID: googlefake.DefaultActionID,
			}},
			Events:       events,
			Consent:      &google.Consent{AdUserData: google.ConsentGranted, AdPersonalization: google.ConsentGranted},
			ValidateOnly: validateOnly,
		}
	}
	if _, err := dm.Ingest(ctx, ts, request(-1)); err != nil {
		return res, fmt.Errorf("baseline warm-up request: %w", err)
	}
	reqs := make([]google.IngestRequest, requests)
	for i := range reqs {
		reqs[i] = request(i)
	}
	start := time.Now()
	for _, req := range reqs {
		t := time.Now()
		if _, err := dm.Ingest(ctx, ts, req); err != nil {
			return res, fmt.Errorf("baseline request: %w", err)
		}
		res.Lat = append(res.Lat, time.Since(t))
	}
	res.Took = time.Since(start)
	slices.Sort(res.Lat)
	return res, nil
}
