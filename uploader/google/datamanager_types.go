package google

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Account types and enum values of the Data Manager API used by the uploader.
const (
	AccountTypeGoogleAds = "GOOGLE_ADS"

	ConsentGranted = "CONSENT_GRANTED"
	ConsentDenied  = "CONSENT_DENIED"

	EventSourceInStore = "IN_STORE"
	EventSourceWeb     = "WEB"
)

// Request statuses of requestStatus:retrieve. PROCESSING is the only non-terminal one.
const (
	StatusSuccess        = "SUCCESS"
	StatusProcessing     = "PROCESSING"
	StatusFailed         = "FAILED"
	StatusPartialSuccess = "PARTIAL_SUCCESS"
	StatusUnknown        = "REQUEST_STATUS_UNKNOWN"
)

// IngestRequest is the body of events:ingest (proto3 JSON). Its JSON form is a contract surface:
// see testdata/ingest_request.golden.json.
type IngestRequest struct {
	Destinations []Destination `json:"destinations"`
	Events       []Event       `json:"events"`
	Consent      *Consent      `json:"consent,omitempty"`
	ValidateOnly bool          `json:"validateOnly,omitempty"`
}

// ProductAccount names an account; AccountID is digits only (10 for Google Ads).
type ProductAccount struct {
	AccountType string `json:"accountType"`
	AccountID   string `json:"accountId"`
}

// Destination: OperatingAccount is the conversion customer that owns the conversion action;
// LoginAccount its manager when reached through one; ProductDestinationID the numeric
// conversion action ID (never a resource name).
type Destination struct {
	OperatingAccount     ProductAccount  `json:"operatingAccount"`
	LoginAccount         *ProductAccount `json:"loginAccount,omitempty"`
	ProductDestinationID string          `json:"productDestinationId"`
	Reference            string          `json:"reference,omitempty"`
}

// AdIdentifiers carries exactly one click ID.
type AdIdentifiers struct {
	Gclid  string `json:"gclid,omitempty"`
	Gbraid string `json:"gbraid,omitempty"`
	Wbraid string `json:"wbraid,omitempty"`
}

// Consent values are CONSENT_GRANTED or CONSENT_DENIED (with the prefix, unlike Google Ads).
type Consent struct {
	AdUserData        string `json:"adUserData,omitempty"`
	AdPersonalization string `json:"adPersonalization,omitempty"`
}

// Event is one conversion. EventTimestamp is RFC 3339; ConversionValue is a pointer because the
// proto tracks its presence.
type Event struct {
	EventTimestamp  string        `json:"eventTimestamp"`
	TransactionID   string        `json:"transactionId,omitempty"`
	AdIdentifiers   AdIdentifiers `json:"adIdentifiers"`
	ConversionValue *float64      `json:"conversionValue,omitempty"`
	Currency        string        `json:"currency,omitempty"`
	EventSource     string        `json:"eventSource,omitempty"`
	Consent         *Consent      `json:"consent,omitempty"`
}

// FieldWarning is a non-blocking problem with an optional field of one event.
type FieldWarning struct {
	Reason      string
	Description string
	Field       string
	// EventIndex is the row named by "events[N]" in Field, -1 if none.
	EventIndex int
}

// IngestResponse: HTTP 200 only means "accepted for processing"; RequestID is the handle for
// diagnostics (never retrieve it for a validateOnly request).
type IngestResponse struct {
	RequestID     string
	FieldWarnings []FieldWarning
}

// ReasonCount is one aggregated diagnostics count. Reason is kept exactly as sent, including
// reasons added after this code was written.
type ReasonCount struct {
	Reason string
	Count  int64
}

// DestinationStatus is the diagnostics of one destination of a request, in request order.
type DestinationStatus struct {
	Destination   Destination
	RequestStatus string // SUCCESS | PROCESSING | FAILED | PARTIAL_SUCCESS | REQUEST_STATUS_UNKNOWN
	// RecordCount counts every event sent to the destination, successful or not.
	RecordCount int64
	// Errors are only filled for FAILED and PARTIAL_SUCCESS, and may be empty even then.
	Errors   []ReasonCount
	Warnings []ReasonCount
}

// Terminal reports whether the destination reached a final status.
func (s DestinationStatus) Terminal() bool {
	return s.RequestStatus != StatusProcessing && s.RequestStatus != StatusUnknown && s.RequestStatus != ""
}

// RequestStatus is the answer of requestStatus:retrieve.
type RequestStatus struct {
	Destinations []DestinationStatus
}

// Terminal reports whether every destination reached a final status.
func (r RequestStatus) Terminal() bool {
	if len(r.Destinations) == 0 {
		return false
	}
	for _, d := range r.Destinations {
		if !d.Terminal() {
			return false
		}
	}
	return true
}

// Wire forms of the responses.

type ingestResponseWire struct {
	RequestID     string `json:"requestId"`
	FieldWarnings []struct {
		Reason      string `json:"reason"`
		Description string `json:"description"`
		Field       string `json:"field"`
	} `json:"fieldWarnings"`
}

type reasonCountWire struct {
	RecordCount int64String `json:"recordCount"`
	Reason      string      `json:"reason"`
}

type requestStatusWire struct {
	RequestStatusPerDestination []struct {
		Destination           Destination `json:"destination"`
		RequestStatus         string      `json:"requestStatus"`
		EventsIngestionStatus *struct {
			RecordCount int64String `json:"recordCount"`
		} `json:"eventsIngestionStatus"`
		ErrorInfo *struct {
			ErrorCounts []reasonCountWire `json:"errorCounts"`
		} `json:"errorInfo"`
		WarningInfo *struct {
			WarningCounts []reasonCountWire `json:"warningCounts"`
		} `json:"warningInfo"`
	} `json:"requestStatusPerDestination"`
}

// int64String reads a proto3 JSON int64, which Google writes as a string but parsers must also
// accept as a number.
type int64String int64

func (n *int64String) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return err
	}
	*n = int64String(v)
	return nil
}

var _ json.Unmarshaler = (*int64String)(nil)
