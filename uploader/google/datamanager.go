package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// DataManager is a client of the Data Manager API's IngestionService. Google ignores headers on
// ingestion: accounts travel in the body.
type DataManager struct {
	base string
	c    caller
}

// NewDataManager: baseURL is the API host (https://datamanager.googleapis.com or the fake); hc nil
// means a client with a 30 s timeout.
func NewDataManager(baseURL string, hc *http.Client) *DataManager {
	return &DataManager{base: strings.TrimRight(baseURL, "/"), c: newCaller(hc)}
}

// Ingest sends one events:ingest request. Google validates the whole request first (fast-fail): a
// single bad event rejects everything with an *APIError whose Violations name the rows.
func (d *DataManager) Ingest(ctx context.Context, ts oauth2.TokenSource, req IngestRequest) (IngestResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return IngestResponse{}, fmt.Errorf("google data manager: encode ingest request: %w", err)
	}
	var wire ingestResponseWire
	if err := d.c.do(ctx, ts, http.MethodPost, d.base+"/v1/events:ingest", nil, body, &wire); err != nil {
		return IngestResponse{}, err
	}
	resp := IngestResponse{RequestID: wire.RequestID}
	for _, w := range wire.FieldWarnings {
		resp.FieldWarnings = append(resp.FieldWarnings, FieldWarning{Reason: w.Reason, Description: w.Description, Field: w.Field, EventIndex: EventIndex(w.Field)})
	}
	return resp, nil
}

// RetrieveStatus fetches the asynchronous diagnostics of an accepted (non-validateOnly) request.
// Google asks for a first call no sooner than 30 minutes after ingestion, then backoff.
func (d *DataManager) RetrieveStatus(ctx context.Context, ts oauth2.TokenSource, requestID string) (RequestStatus, error) {
	if requestID == "" {
		return RequestStatus{}, errors.New("google data manager: empty request ID")
	}
	var wire requestStatusWire
	u := d.base + "/v1/requestStatus:retrieve?" + url.Values{"requestId": {requestID}}.Encode()
	if err := d.c.do(ctx, ts, http.MethodGet, u, nil, nil, &wire); err != nil {
		return RequestStatus{}, err
	}
	var st RequestStatus
	for _, w := range wire.RequestStatusPerDestination {
		ds := DestinationStatus{Destination: w.Destination, RequestStatus: w.RequestStatus}
		if w.EventsIngestionStatus != nil {
			ds.RecordCount = int64(w.EventsIngestionStatus.RecordCount)
		}
		if w.ErrorInfo != nil {
			ds.Errors = reasonCounts(w.ErrorInfo.ErrorCounts)
		}
		if w.WarningInfo != nil {
			ds.Warnings = reasonCounts(w.WarningInfo.WarningCounts)
		}
		if ds.RequestStatus == "" {
			ds.RequestStatus = StatusUnknown
		}
		st.Destinations = append(st.Destinations, ds)
	}
	return st, nil
}

func reasonCounts(in []reasonCountWire) []ReasonCount {
	out := make([]ReasonCount, 0, len(in))
	for _, c := range in {
		out = append(out, ReasonCount{Reason: c.Reason, Count: int64(c.RecordCount)})
	}
	return out
}
