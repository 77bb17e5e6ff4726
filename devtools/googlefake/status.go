package googlefake

import (
	"net/http"
	"strconv"
)

// Wire form of RetrieveRequestStatusResponse. Counts are int64, hence strings.
type statusResponse struct {
	RequestStatusPerDestination []destStatus `json:"requestStatusPerDestination"`
}

type destStatus struct {
	Destination           wireDestination  `json:"destination"`
	RequestStatus         string           `json:"requestStatus"`
	EventsIngestionStatus *ingestionStatus `json:"eventsIngestionStatus,omitempty"`
	ErrorInfo             *errorCounts     `json:"errorInfo,omitempty"`
	WarningInfo           *warningCounts   `json:"warningInfo,omitempty"`
}

type ingestionStatus struct {
	RecordCount string `json:"recordCount"`
}

type reasonCount struct {
	RecordCount string `json:"recordCount"`
	Reason      string `json:"reason"`
}

type errorCounts struct {
	ErrorCounts []reasonCount `json:"errorCounts"`
}

type warningCounts struct {
	WarningCounts []reasonCount `json:"warningCounts"`
}

func (r *reasonCounts) wire() []reasonCount {
	out := make([]reasonCount, 0, len(r.order))
	for _, reason := range r.order {
		out = append(out, reasonCount{RecordCount: strconv.FormatInt(r.n[reason], 10), Reason: reason})
	}
	return out
}

// retrieve is GET /v1/requestStatus:retrieve?requestId=. A request stays PROCESSING (status only)
// for Config.ProcessingDelay; then each destination is SUCCESS, PARTIAL_SUCCESS or FAILED, with
// errorInfo only on the last two (and only for failures with a reason) and warningInfo whenever
// there are warnings.
func (f *Fake) retrieve(w http.ResponseWriter, r *http.Request) {
	if !f.authenticate(w, r, scopeDataManager, methodRetrieve) {
		return
	}
	id := r.URL.Query().Get("requestId")
	if id == "" {
		id = r.URL.Query().Get("request_id")
	}
	f.mu.Lock()
	failure := f.failRetrieve.take()
	rec, ok := f.ingests[id]
	var resp statusResponse
	if ok {
		resp = f.statusOf(rec)
	}
	f.mu.Unlock()
	requestID := newRequestID()
	switch {
	case failure != 0:
		f.scriptedError(w, failure, serviceDataManager, requestID)
	case id == "":
		writeInvalid(w, requestID, []fieldViolation{{Field: "request_id", Reason: "REQUIRED_FIELD_MISSING", Description: "The request ID is required."}})
	case !ok:
		writeInvalid(w, requestID, []fieldViolation{{Field: "request_id", Reason: "INVALID_REQUEST_ID",
			Description: "Status can only be retrieved for requests that succeeded and were not validate_only."}})
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// statusOf renders rec at the fake's current time; the caller holds f.mu.
func (f *Fake) statusOf(rec *ingestRecord) statusResponse {
	processing := f.cfg.Now().Before(rec.created.Add(f.cfg.ProcessingDelay))
	resp := statusResponse{RequestStatusPerDestination: make([]destStatus, 0, len(rec.dests))}
	for _, d := range rec.dests {
		ds := destStatus{Destination: d.dest}
		if processing {
			ds.RequestStatus = "PROCESSING"
			resp.RequestStatusPerDestination = append(resp.RequestStatusPerDestination, ds)
			continue
		}
		ds.EventsIngestionStatus = &ingestionStatus{RecordCount: strconv.FormatInt(d.records, 10)}
		failed := d.errors.total() + d.unexplained
		switch {
		case failed == 0:
			ds.RequestStatus = "SUCCESS"
		case failed >= d.records:
			ds.RequestStatus = "FAILED"
		default:
			ds.RequestStatus = "PARTIAL_SUCCESS"
		}
		if d.errors.total() > 0 {
			ds.ErrorInfo = &errorCounts{ErrorCounts: d.errors.wire()}
		}
		if len(d.warnings.order) > 0 {
			ds.WarningInfo = &warningCounts{WarningCounts: d.warnings.wire()}
		}
		resp.RequestStatusPerDestination = append(resp.RequestStatusPerDestination, ds)
	}
	return resp
}
