package schemas

import "time"

// Topic declares one Kafka topic: its versioned name, sizing, retention, how it is keyed and the Go
// type of its messages. The version suffix changes only with an incompatible message change, and
// then both versions run side by side until consumers have moved.
type Topic struct {
	Name       string
	Partitions int32
	// Retention of the log; -1 keeps records forever (compacted state keeps the latest per key).
	Retention time.Duration
	Compact   bool
	// Key documents what the record key is; it decides ordering (one key, one partition).
	Key string
	// Message is a zero value of the message type, used to derive the JSON schema.
	Message any
	Doc     string
}

const week = 7 * 24 * time.Hour

// Topic names. Producers and consumers use these constants; the suffix is the message version.
const (
	TopicBrowserEvents    = "revtrack.browser-events.v1"
	TopicServerEvents     = "revtrack.server-events.v1"
	TopicSessionState     = "revtrack.session-state.v1"
	TopicAcquisitionLinks = "revtrack.acquisition-links.v1"
	TopicPlatformRecords  = "revtrack.platform-records.v1"
	TopicUploadJobs       = "revtrack.upload-jobs.v1"
	TopicDeadLetters      = "revtrack.dead-letters.v1"
)

// Topics is every topic revtrack uses, created idempotently at start-up.
func Topics() []Topic {
	return []Topic{
		{Name: TopicBrowserEvents, Partitions: 6, Retention: week, Key: "<source_id>:<acquisition_id>", Message: BrowserEvent{},
			Doc: "Browser events accepted by the ingest edge (page_view, platform_context, custom)."},
		{Name: TopicServerEvents, Partitions: 6, Retention: week, Key: "<source_id>:<acquisition_id>", Message: ServerEvent{},
			Doc: "Verified lifecycle events from the publisher's server, after validation and deduplication."},
		{Name: TopicSessionState, Partitions: 6, Retention: -1, Compact: true, Key: "<source_id>:<acquisition_id>", Message: SessionState{},
			Doc: "The sessionizer's latest state per browser; compacted so a restarted sessionizer resumes."},
		{Name: TopicAcquisitionLinks, Partitions: 6, Retention: -1, Compact: true, Key: "<source_id>:<acquisition_id>", Message: AcquisitionLink{},
			Doc: "Acquisition ID to shop links made by the identity join; compacted: the latest link per browser."},
		{Name: TopicPlatformRecords, Partitions: 6, Retention: week, Key: "<workspace_id>:<app_id>:<customer_id>", Message: PlatformRecord{},
			Doc: "Records pulled from the platform's partner API by the sync connector."},
		{Name: TopicUploadJobs, Partitions: 3, Retention: week, Key: "<workspace_id>:<mapping_id>", Message: UploadJob{},
			Doc: "Upload-queue rows to send to the advertising platform, one per mapped verified server event."},
		{Name: TopicDeadLetters, Partitions: 1, Retention: 30 * 24 * time.Hour, Key: "<consumer>", Message: DeadLetter{},
			Doc: "Records a consumer could not process, with the reason; never silently dropped."},
	}
}
