package schemas

import "time"

// UploadJob is one upload-queue row to act on. The source event ID is present only as its SHA-256.
type UploadJob struct {
	RowID         string    `json:"rowId" jsonschema:"minLength=1"`
	WorkspaceID   string    `json:"workspaceId" jsonschema:"minLength=1"`
	MappingID     string    `json:"mappingId" jsonschema:"minLength=1"`
	SourceID      string    `json:"sourceId" jsonschema:"minLength=1"`
	EventIDHash   string    `json:"eventIdHash" jsonschema:"pattern=^[0-9a-f]{64}$"`
	TransactionID string    `json:"transactionId" jsonschema:"minLength=1"`
	Milestone     string    `json:"milestone" jsonschema:"enum=install,enum=trial_started,enum=trial_converted,enum=qualified,enum=paid"`
	AcquisitionID string    `json:"acquisitionId,omitempty"`
	ClickIDType   string    `json:"clickIdType,omitempty" jsonschema:"enum=,enum=gclid,enum=gbraid,enum=wbraid"`
	ClickID       string    `json:"clickId,omitempty"`
	EventTime     time.Time `json:"eventTime"`
	ValueCents    *int64    `json:"valueCents,omitempty"`
	Currency      string    `json:"currency,omitempty" jsonschema:"pattern=^([A-Z]{3})?$"`
}

// DeadLetter carries a record a consumer could not process, with why, so it can be inspected and
// replayed; the consumer moves on instead of blocking its partition.
type DeadLetter struct {
	Consumer  string    `json:"consumer" jsonschema:"minLength=1"`
	Topic     string    `json:"topic" jsonschema:"minLength=1"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Key       []byte    `json:"key,omitempty" jsonschema:"description=base64 of the original key"`
	Value     []byte    `json:"value,omitempty" jsonschema:"description=base64 of the original value"`
	Reason    string    `json:"reason" jsonschema:"minLength=1,description=closed vocabulary, e.g. decode_error or invalid_message"`
	Error     string    `json:"error"`
	At        time.Time `json:"at"`
}
