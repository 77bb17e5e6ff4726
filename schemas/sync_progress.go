package schemas

import "time"

// SyncProgress is a running sync run's live progress (docs/PLATFORM_SYNC.md "Progress of a running
// run"). The process executing the run publishes it to Redis every few seconds under
// SyncProgressKey with a short expiry, and deletes it once the run's final row is written; readers
// (query/syncruns) attach it to runs still marked running. A run whose process died loses it when
// the key expires, so a stale "running" row never shows progress for long.
type SyncProgress struct {
	// UpdatedAt is when the running process last published this (wall clock).
	UpdatedAt time.Time `json:"updatedAt"`
	// EventsCount and TransactionsCount are the records the run has loaded so far (produced and
	// acknowledged), counted as the run's final counts will be.
	EventsCount       uint64 `json:"eventsCount"`
	TransactionsCount uint64 `json:"transactionsCount"`
	// Pages is how many partner API pages the run has fetched in its walks.
	Pages uint64   `json:"pages"`
	Walk  SyncWalk `json:"walk"`
}

// SyncWalk is the walk a run is in: step Step of Steps (forward transactions, forward lifecycle
// events, backward lifecycle events, backward transactions).
type SyncWalk struct {
	Step   int    `json:"step"`
	Steps  int    `json:"steps"`
	Stream string `json:"stream" jsonschema:"enum=transactions,enum=lifecycle_events"`
	// Direction: forward walks from the stream's forward cursor toward the run's start instant
	// (new records); backward walks from the oldest instant loaded toward the app's first record.
	Direction string `json:"direction" jsonschema:"enum=forward,enum=backward"`
	// From is where this walk started, ReachedAt the instant it has loaded through without gaps
	// (forward: the newest; backward: the oldest), Target where it ends (null until known).
	From      time.Time  `json:"from"`
	ReachedAt time.Time  `json:"reachedAt"`
	Target    *time.Time `json:"target"`
	// EstimatedSecondsLeft is this walk's remaining time at the rate it has moved through history
	// so far (null when not known yet); later steps are not included.
	EstimatedSecondsLeft *int64 `json:"estimatedSecondsLeft"`
}

// SyncProgressKey is the Redis key of a run's progress, under the deployment's key prefix.
func SyncProgressKey(prefix, workspaceID, appID, runID string) string {
	return prefix + "platformsync:progress:" + workspaceID + "/" + appID + "/" + runID
}
