package uploader

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

// futureTolerance is how far ahead of the uploader's clock an event may be: clocks of the
// publisher's server drift, but an event an hour ahead is wrong, and the platform refuses it.
const futureTolerance = 5 * time.Minute

var (
	hex64Re    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	currencyRe = regexp.MustCompile(`^([A-Z]{3})?$`)
	milestones = map[string]bool{"install": true, "trial_started": true, "trial_converted": true, "qualified": true, "paid": true}
	clickTypes = map[string]bool{"": true, "gclid": true, "gbraid": true, "wbraid": true}
)

// decodeJob decodes an upload job and checks its contract, including that its row and
// transaction IDs are the ones docs/ADS_UPLOAD.md derives (schemas/upload_ids.go) from the mapping
// and the event-ID hash:
// a job that breaks it would create a row no redelivery could find again.
func decodeJob(r *kgo.Record) (schemas.UploadJob, error) {
	var j schemas.UploadJob
	if err := json.Unmarshal(r.Value, &j); err != nil {
		return j, fmt.Errorf("decode %s: %w", r.Topic, err)
	}
	return j, validateJob(j)
}

func validateJob(j schemas.UploadJob) error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: %s", schemas.ErrInvalidMessage, fmt.Sprintf(f, a...))
	}
	switch {
	case j.WorkspaceID == "" || j.MappingID == "" || j.SourceID == "":
		return bad("workspaceId, mappingId and sourceId are required")
	case !hex64Re.MatchString(j.EventIDHash):
		return bad("eventIdHash must be 64 lowercase hex digits")
	case j.RowID != schemas.UploadRowID(j.MappingID, j.EventIDHash):
		return bad("rowId %q is not the one derived from mappingId and eventIdHash", j.RowID)
	case j.TransactionID != schemas.UploadTransactionID(j.MappingID, j.EventIDHash):
		return bad("transactionId %q is not the one derived from mappingId and eventIdHash", j.TransactionID)
	case !milestones[j.Milestone]:
		return bad("milestone %q is not mappable", j.Milestone)
	case !clickTypes[j.ClickIDType]:
		return bad("clickIdType %q is not supported", j.ClickIDType)
	case (j.ClickIDType == "") != (j.ClickID == ""):
		return bad("clickIdType and clickId go together")
	case j.EventTime.IsZero():
		return bad("eventTime is required")
	case !currencyRe.MatchString(j.Currency):
		return bad("currency must be a three-letter code")
	case j.ValueCents != nil && *j.ValueCents <= 0:
		return bad("valueCents must be positive")
	}
	return nil
}

// newRow is the first version of a job's row, in its initial state (docs/ADS_UPLOAD.md):
// unattributed without a click ID; rejected with a local reason when the event precedes the
// mapping, is older than maxAge or lies in the future; queued otherwise. A row records the mapping's
// Validation only flag when it is filed: a row filed while it is on is only ever sent validate-only.
func newRow(j schemas.UploadJob, m controlplane.AdMapping, now time.Time, maxAge time.Duration) Row {
	now = now.UTC()
	r := Row{
		RowID: j.RowID, WorkspaceID: j.WorkspaceID, MappingID: j.MappingID, SourceID: j.SourceID,
		EventIDHash: j.EventIDHash, TransactionID: j.TransactionID, Milestone: j.Milestone,
		AcquisitionID: j.AcquisitionID, ClickIDType: j.ClickIDType, ClickID: j.ClickID,
		EventTime: j.EventTime.UTC(), ValueCents: j.ValueCents, Currency: j.Currency, ValidationOnly: m.ValidationOnly,
		ReasonCodes: []string{}, CreatedAt: now, UpdatedAt: now, Version: nextVersion(0, now),
	}
	switch {
	case !r.HasClickEvidence():
		r.Status = StatusUnattributed
		r.Message = "no supported click ID (gclid, gbraid or wbraid) was captured for this acquisition; nothing is uploaded"
	case j.EventTime.Before(m.CreatedAt):
		r.Status, r.ReasonCodes = StatusRejected, []string{ReasonEventBeforeMapping}
		r.Message = "the event occurred before the mapping was created; past events are not uploaded"
	case now.Sub(j.EventTime) > maxAge:
		r.Status, r.ReasonCodes = StatusRejected, []string{ReasonEventOutsideWindow}
		r.Message = fmt.Sprintf("the event is older than the platform's window (%s); not uploaded", maxAge)
	case j.EventTime.Sub(now) > futureTolerance:
		r.Status, r.ReasonCodes = StatusRejected, []string{ReasonEventOutsideWindow}
		r.Message = "the event time lies in the future; not uploaded"
	default:
		r.Status = StatusQueued
	}
	return r
}
