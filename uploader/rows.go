package uploader

import (
	"time"

	"github.com/revtrack/revtrack/uploader/google"
)

// Status is an upload-queue row's state (docs/ADS_UPLOAD.md, "Upload-queue row states").
type Status string

// Row states; the values are the upload_queue.status enum names.
const (
	StatusQueued       Status = "queued"
	StatusUnattributed Status = "unattributed"
	StatusValidated    Status = "validated"
	StatusAccepted     Status = "accepted"
	StatusRetrying     Status = "retrying"
	StatusRejected     Status = "rejected"
)

// statusNew labels the transition of a row that did not exist yet (metrics, logs).
const statusNew Status = "new"

// Local reasons: a row rejected before anything was sent. Retry refuses them, because resending
// cannot change the outcome.
const (
	ReasonEventBeforeMapping = "EVENT_BEFORE_MAPPING"
	ReasonEventOutsideWindow = "EVENT_OUTSIDE_WINDOW"
)

// Local codes recorded beside the platform's, to say what its own codes leave out. Retry allows
// them.
const (
	// ReasonInvalidClickIDField: the platform's fast-fail validation named the event's gclid, gbraid
	// or wbraid field; its own reason (for example INVALID_FORMAT) follows it.
	ReasonInvalidClickIDField = "INVALID_CLICK_ID_FIELD"
	// ReasonProcessingFailedWithoutDetails: the request's diagnostics said FAILED (or a one-event
	// PARTIAL_SUCCESS) without any error counts.
	ReasonProcessingFailedWithoutDetails = "PROCESSING_FAILED_WITHOUT_DETAILS"
	// ReasonConnectionDisconnected: the row was accepted, but the connection that sent it was
	// disconnected before its diagnostics were read (DiagnosticsOutcomeUnknown).
	ReasonConnectionDisconnected = "CONNECTION_DISCONNECTED"
)

func localReason(codes []string) bool {
	for _, c := range codes {
		if c == ReasonEventBeforeMapping || c == ReasonEventOutsideWindow {
			return true
		}
	}
	return false
}

// Diagnostics statuses kept on a row sent live; the first four are the platform's request
// statuses as it reported them.
const (
	DiagnosticsProcessing     = google.StatusProcessing
	DiagnosticsSuccess        = google.StatusSuccess
	DiagnosticsFailed         = google.StatusFailed
	DiagnosticsPartialSuccess = google.StatusPartialSuccess
	// DiagnosticsUnavailable: polling stopped without a terminal status (attempts exhausted, the
	// request ID refused, or no request ID returned).
	DiagnosticsUnavailable = "UNAVAILABLE"
	// DiagnosticsOutcomeUnknown: the advertising connection was disconnected (its credential revoked
	// and erased) before the request's diagnostics gave a terminal status, so no poll can learn
	// whether the platform applied or rejected the conversion. The row's reason code says why
	// (ReasonConnectionDisconnected) and its message when.
	DiagnosticsOutcomeUnknown = "OUTCOME_UNKNOWN"
)

// Row is the latest version of one upload-queue row. A row changes only by a new version (the
// table is a ReplacingMergeTree on version); every field but the state ones is fixed at creation.
type Row struct {
	RowID       string `json:"rowId"`
	WorkspaceID string `json:"workspaceId"`
	MappingID   string `json:"mappingId"`
	SourceID    string `json:"sourceId"`
	// EventIDHash is the SHA-256 of "<source_id>:<event_id>"; the raw event ID is never stored.
	EventIDHash   string `json:"eventIdHash"`
	TransactionID string `json:"transactionId"`
	Milestone     string `json:"milestone"`
	AcquisitionID string `json:"acquisitionId"`
	// ClickIDType is gclid, gbraid, wbraid or "" (no click evidence); ClickID is the captured value.
	// Both are kept until the 180-day scrub.
	ClickIDType string    `json:"clickIdType"`
	ClickID     string    `json:"clickId"`
	EventTime   time.Time `json:"eventTime"`
	// ValueCents and Currency are the event's own value (minor units); a mapping's fixed value
	// replaces them when the row is sent.
	ValueCents *int64 `json:"valueCents,omitempty"`
	Currency   string `json:"currency,omitempty"`
	Status     Status `json:"status"`
	// ValidationOnly: the row goes out validate-only. Set from the mapping's Validation only flag
	// when the row is filed, and by every send in that mode; once set it stays, so turning
	// Validation only off never sends a row filed before (docs/ADS_UPLOAD.md).
	ValidationOnly bool `json:"validationOnly"`
	// Attempts counts ingestion attempts since the row was created or last retried by a user.
	Attempts uint16 `json:"attempts"`
	// NextAttemptAt is when a retrying (or waiting) row is sent again, or, for an accepted row,
	// when its diagnostics are polled next; nil when nothing is scheduled.
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	RequestID     string     `json:"requestId,omitempty"`
	// ReasonCodes are the platform's reason codes as sent (unknown ones verbatim), or a local reason.
	ReasonCodes []string `json:"reasonCodes"`
	Message     string   `json:"message,omitempty"`
	// PollAttempts counts diagnostics polls of the row's request.
	PollAttempts      uint16 `json:"pollAttempts"`
	DiagnosticsStatus string `json:"diagnosticsStatus,omitempty"`
	// The destination the row was last sent to (for "wrong account" diagnosis) and how many events
	// that request held (1 means asynchronous diagnostics name this row exactly).
	ConversionCustomerID string    `json:"conversionCustomerId,omitempty"`
	LoginCustomerID      string    `json:"loginCustomerId,omitempty"`
	ConversionActionID   string    `json:"conversionActionId,omitempty"`
	RequestEvents        uint32    `json:"requestEvents,omitempty"`
	CreatedAt            time.Time `json:"createdAt"`
	UpdatedAt            time.Time `json:"updatedAt"`
	// Diagnosis groups the state and reason codes into the upload diagnostics of docs/ADS_UPLOAD.md,
	// "Diagnostics on the row" (computed when the row is read, not stored).
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	Version   uint64     `json:"-"`
}

// HasClickEvidence says whether the row holds a supported click ID.
func (r Row) HasClickEvidence() bool { return r.ClickIDType != "" && r.ClickID != "" }

// nextVersion is the version of a row's next state: wall-clock nanoseconds, but always above the
// previous version so a slow clock on another instance cannot hide a newer state.
func nextVersion(prev uint64, now time.Time) uint64 {
	v := uint64(now.UnixNano())
	if v <= prev {
		v = prev + 1
	}
	return v
}
