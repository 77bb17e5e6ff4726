package processors

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Upload matching rules (the pure part; upload_match_sink.go does the I/O).
//
// A verified server event whose name is a mappable milestone (docs/ADS_UPLOAD.md, "The upload
// matcher", step 1) becomes one upload job per enabled mapping of its (workspace, source, milestone)
// whose connection is connected. `identified`, `canceled`, `churned` and `refunded` are never mapped.
//
// Each job carries the click evidence of the event's own acquisition ID (step 3: the click must be
// captured for the same acquisition as the verified event; a shop's other browsers do not count):
// the acquisition's first gclid, else its first gbraid, else its first wbraid. An event without an
// acquisition ID, or whose acquisition captured none of them, still becomes a job, without click
// evidence: the uploader keeps it as an unattributed row so the diagnostics can show it.
//
// The matcher decides nothing else. Window, mapping age, the fixed value and Validation only are
// applied by the uploader when it files and sends the row (docs/ADS_UPLOAD.md).
//
// Row and transaction IDs are functions of the source event and the mapping (schemas/upload_ids.go),
// so a redelivered event or a retried batch produces jobs naming the same rows, which the uploader
// files once.

// uploadMilestones are the mappable milestones, the values of ad_mappings.milestone.
var uploadMilestones = []string{"install", "trial_started", "trial_converted", "qualified", "paid"}

func isUploadMilestone(name string) bool { return slices.Contains(uploadMilestones, name) }

// Click identifier types, the values of UploadJob.ClickIDType, in order of preference.
const (
	clickGclid  = "gclid"
	clickGbraid = "gbraid"
	clickWbraid = "wbraid"
)

// clickEvidence is what an acquisition captured of each click identifier (first touch).
type clickEvidence struct{ Gclid, Gbraid, Wbraid string }

// pick returns the identifier to upload: gclid, else gbraid, else wbraid; empty when there is none.
func (c clickEvidence) pick() (kind, id string) {
	switch {
	case c.Gclid != "":
		return clickGclid, c.Gclid
	case c.Gbraid != "":
		return clickGbraid, c.Gbraid
	case c.Wbraid != "":
		return clickWbraid, c.Wbraid
	}
	return "", ""
}

// mappingKey is what a mapping matches an event on.
type mappingKey struct{ WorkspaceID, SourceID, Milestone string }

// acqKey names an acquisition: its ID is unique within its source.
type acqKey struct{ SourceID, AcquisitionID string }

// uploadMapping is an enabled mapping of a connected workspace, as the matcher needs it.
type uploadMapping struct {
	MappingID string
	Key       mappingKey
}

// mappingIndex groups mapping IDs by what they match, each list sorted so jobs come out in a
// stable order.
func mappingIndex(ms []uploadMapping) map[mappingKey][]string {
	out := map[mappingKey][]string{}
	for _, m := range ms {
		if !slices.Contains(out[m.Key], m.MappingID) {
			out[m.Key] = append(out[m.Key], m.MappingID)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

func mappingKeyOf(e schemas.ServerEvent) mappingKey {
	return mappingKey{WorkspaceID: e.WorkspaceID, SourceID: e.SourceID, Milestone: e.Name}
}

// uploadJobsOf returns the event's job for each mapping ID, with the given click evidence.
func uploadJobsOf(e schemas.ServerEvent, mappingIDs []string, click clickEvidence) []schemas.UploadJob {
	hash := schemas.EventIDHash(e.SourceID, e.EventID)
	var kind, id string
	if e.AcquisitionID != "" {
		kind, id = click.pick()
	}
	jobs := make([]schemas.UploadJob, 0, len(mappingIDs))
	for _, m := range mappingIDs {
		jobs = append(jobs, schemas.UploadJob{
			RowID: schemas.UploadRowID(m, hash), WorkspaceID: e.WorkspaceID, MappingID: m, SourceID: e.SourceID,
			EventIDHash: hash, TransactionID: schemas.UploadTransactionID(m, hash), Milestone: e.Name,
			AcquisitionID: e.AcquisitionID, ClickIDType: kind, ClickID: id, EventTime: e.OccurredAt.UTC(),
			ValueCents: e.AmountCents, Currency: e.Currency,
		})
	}
	return jobs
}

// uploadJobKey is the upload-jobs topic key: one mapping's jobs stay in order on one partition.
func uploadJobKey(j schemas.UploadJob) []byte { return []byte(j.WorkspaceID + ":" + j.MappingID) }

// decodeUploadMatchEvent decodes a server event for the matcher. The uploader files the event time
// in a DateTime column; Validate's event-time rule (schemas/event_time.go), the same for every
// consumer and for the edge, keeps it within what that column holds.
func decodeUploadMatchEvent(r *kgo.Record) (schemas.ServerEvent, error) {
	return decodeJSON[schemas.ServerEvent](r)
}
