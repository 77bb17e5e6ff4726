package tracking

import (
	"context"
	"fmt"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/budget"
)

// Troubleshooting condition codes: the four tracking troubleshooting conditions of docs/TRACKING.md,
// "7. Troubleshooting" (the table's first four rows).
const (
	ConditionOriginNotAllowed  = "origin_not_allowed"
	ConditionSourceUnavailable = "source_unavailable"
	ConditionNoPageView        = "no_page_view"
	ConditionNoLifecycleEvent  = "no_lifecycle_event"
)

// rejectionsHint explains the two conditions the store cannot see.
const rejectionsHint = "Requests the ingest edge rejects (origin not allowed, tracking source unavailable) are not stored, so " +
	"they cannot be seen here: the edge counts them in revtrack_ingest_requests_total by outcome " +
	"(origin_not_allowed, tracking_source_unavailable) and answers them with that error."

// Seen says whether, how often and when last something was received.
type Seen struct {
	Count uint64 `json:"count"`
	// LastAt is the last receipt time; null when none was received.
	LastAt *time.Time `json:"lastAt"`
}

// ClickEvidence counts what carried a supported click ID (gclid, gbraid or wbraid).
type ClickEvidence struct {
	// BrowserEvents and Acquisitions: received browser events whose first touch has a click ID,
	// and the distinct browsers among them.
	BrowserEvents uint64 `json:"browserEvents"`
	Acquisitions  uint64 `json:"acquisitions"`
	// LifecycleEvents: server events of the source that occurred since then and are attributed to
	// an acquisition with a click ID, the ones an advertising upload can use.
	LifecycleEvents uint64 `json:"lifecycleEvents"`
}

// Condition is one troubleshooting condition. Checked is false for conditions the store cannot
// observe; Detected is then always false and the message says where to look.
type Condition struct {
	Code     string `json:"code"`
	Checked  bool   `json:"checked"`
	Detected bool   `json:"detected"`
	Message  string `json:"message"`
}

// Troubleshooting is the state of one tracking source since a time.
type Troubleshooting struct {
	WorkspaceID     string    `json:"workspaceId"`
	SourceID        string    `json:"sourceId"`
	Since           time.Time `json:"since"`
	PageViews       Seen      `json:"pageViews"`
	LifecycleEvents Seen      `json:"lifecycleEvents"`
	// IdentifiedEvents is how many of the lifecycle events were `identified` (links, not conversions).
	IdentifiedEvents uint64        `json:"identifiedEvents"`
	ClickEvidence    ClickEvidence `json:"clickEvidence"`
	// Conditions lists the four conditions in the order of docs/TRACKING.md, "7. Troubleshooting".
	Conditions []Condition `json:"conditions"`
	Hint       string      `json:"hint"`
	// Refusals is what the ingest edge refused for the source recently (ApplyRefusals); absent when
	// the server does not record them.
	Refusals *controlplane.SourceRefusals `json:"refusals,omitempty"`
}

// Troubleshoot reports what a tracking source received since a time (zero: the last 30 days):
// page views, lifecycle (server) events, click evidence, and which troubleshooting conditions hold.
// Counts are of distinct event IDs, by time of receipt.
func (s *Store) Troubleshoot(ctx context.Context, sc Scope, sourceID string, since time.Time) (Troubleshooting, error) {
	workspaceID := sc.WorkspaceID
	if workspaceID == "" || sourceID == "" {
		return Troubleshooting{}, invalid("workspaceId and sourceId are required")
	}
	if since.IsZero() {
		since = s.now().Add(-DefaultRange)
	}
	if err := budget.Compute(ctx); err != nil {
		return Troubleshooting{}, err
	}
	tr := Troubleshooting{WorkspaceID: workspaceID, SourceID: sourceID, Since: since.UTC(), Hint: rejectionsHint}
	var pvLast, evLast time.Time
	if err := s.conn.QueryRow(ctx, troubleshootBrowser, workspaceID, sc.apps(), sourceID, epoch(since)).Scan(&tr.PageViews.Count, &pvLast,
		&tr.ClickEvidence.BrowserEvents, &tr.ClickEvidence.Acquisitions); err != nil {
		return tr, fmt.Errorf("read browser events: %w", err)
	}
	if err := s.conn.QueryRow(ctx, troubleshootServer, workspaceID, sc.apps(), sourceID, epoch(since)).Scan(&tr.LifecycleEvents.Count, &evLast,
		&tr.IdentifiedEvents); err != nil {
		return tr, fmt.Errorf("read server events: %w", err)
	}
	if err := s.conn.QueryRow(ctx, troubleshootClickAttributed, workspaceID, sc.apps(), sourceID, epoch(since), workspaceID, sc.apps()).Scan(
		&tr.ClickEvidence.LifecycleEvents); err != nil {
		return tr, fmt.Errorf("read click-attributed events: %w", err)
	}
	tr.PageViews.LastAt = lastAt(tr.PageViews.Count, pvLast)
	tr.LifecycleEvents.LastAt = lastAt(tr.LifecycleEvents.Count, evLast)
	tr.Conditions = []Condition{
		{Code: ConditionOriginNotAllowed, Message: "Not observable here (see hint). When browser requests are refused, the " +
			"page's origin must match an allowed origin of the source exactly: scheme, host and port."},
		{Code: ConditionSourceUnavailable, Message: "Not observable here (see hint). Requests are refused when the key was " +
			"rotated or the source is disabled."},
		{Code: ConditionNoPageView, Checked: true, Detected: tr.PageViews.Count == 0, Message: noPageViewMessage(tr.PageViews.Count)},
		{Code: ConditionNoLifecycleEvent, Checked: true, Detected: tr.LifecycleEvents.Count == 0,
			Message: noLifecycleMessage(tr.LifecycleEvents.Count)},
	}
	return tr, nil
}

// lastAt is nil when nothing was counted: the aggregate then returns the zero DateTime.
func lastAt(n uint64, t time.Time) *time.Time {
	if n == 0 {
		return nil
	}
	u := t.UTC()
	return &u
}

func noPageViewMessage(n uint64) string {
	if n == 0 {
		return "No page view received: check the script URL, the public key and that the browser's request to the " +
			"collector succeeds."
	}
	return "Page views are received."
}

func noLifecycleMessage(n uint64) string {
	if n == 0 {
		return "No lifecycle event received: check the team slug, the private key, the event name (one of identified, " +
			"install, trial_started, trial_converted, paid, qualified, canceled, churned, refunded) and that " +
			"occurredAt is an ISO 8601 timestamp."
	}
	return "Lifecycle events are received."
}
