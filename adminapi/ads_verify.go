package adminapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/uploader"
)

// The verification steps, in the recommended order (docs/ADS_UPLOAD.md, "Surfaces"):
// confirm page_view; send a verified event; confirm the queue row with click evidence; confirm
// validated; turn Validation only off; send a new event; confirm in the advertising platform after
// processing.
const (
	StepPageView          = "page_view"
	StepVerifiedEvent     = "verified_event"
	StepQueueRow          = "queue_row"
	StepValidated         = "validated"
	StepValidationOnlyOff = "validation_only_off"
	StepLiveEvent         = "live_event"
	StepPlatformConfirmed = "platform_confirmed"
)

// VerificationStep is one step of the order: done or not yet, what shows it, and what to do next.
type VerificationStep struct {
	Step string `json:"step"`
	Done bool   `json:"done"`
	// At is when the evidence happened (the event's time, or the queue row's creation).
	At *time.Time `json:"at,omitempty"`
	// RowID, Status, ReasonCodes and DiagnosticsStatus name the upload-queue row the step looked at.
	RowID             string   `json:"rowId,omitempty"`
	Status            string   `json:"status,omitempty"`
	ReasonCodes       []string `json:"reasonCodes,omitempty"`
	DiagnosticsStatus string   `json:"diagnosticsStatus,omitempty"`
	Hint              string   `json:"hint"`
}

// MappingVerification is the verification order of one mapping.
type MappingVerification struct {
	MappingID          string `json:"mappingId"`
	SourceID           string `json:"sourceId"`
	Milestone          string `json:"milestone"`
	ConversionActionID string `json:"conversionActionId"`
	Enabled            bool   `json:"enabled"`
	ValidationOnly     bool   `json:"validationOnly"`
	// Blocker says why nothing new can upload through the mapping (disabled, connection not
	// ready); empty when nothing blocks it.
	Blocker string `json:"blocker,omitempty"`
	// Next is the first step not done yet; empty when every step is done.
	Next  string             `json:"next"`
	Steps []VerificationStep `json:"steps"`
}

// Verification is the workspace's verification order, per mapping.
type Verification struct {
	WorkspaceID string `json:"workspaceId"`
	// ConnectionState is connected or disconnected; Ready adds that a conversion account is selected.
	ConnectionState string                `json:"connectionState"`
	Ready           bool                  `json:"ready"`
	Hint            string                `json:"hint,omitempty"`
	Mappings        []MappingVerification `json:"mappings"`
}

// VerifyQueryer reads ClickHouse (driver.Conn).
type VerifyQueryer interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// VerifySetup is what the verification reads of the setup (*uploader.Setup).
type VerifySetup interface {
	Connection(ctx context.Context, workspaceID string) (controlplane.AdConnection, bool, error)
	ListMappings(ctx context.Context, workspaceID string) ([]controlplane.AdMapping, error)
}

// AdsVerifier follows the verification order from what the service stored: tracking events,
// mappings and the upload queue. It reads only; the platform's own reporting is not consulted.
type AdsVerifier struct {
	CH    VerifyQueryer
	Setup VerifySetup
}

// queueFacts is what the queue shows of one mapping.
type queueFacts struct {
	clickRows, validatedRows, acceptedRows, unattributedRows uint64
	clickRow, clickStatus, validatedRow, acceptedRow         string
	acceptedDiagnostics                                      string
	clickReasons                                             []string
	clickAt, validatedAt, acceptedAt                         time.Time
}

// Verify reports the order for every mapping of the workspace, or only mappingID's.
func (v *AdsVerifier) Verify(ctx context.Context, workspaceID, mappingID string) (Verification, error) {
	out := Verification{WorkspaceID: workspaceID, ConnectionState: "disconnected", Mappings: []MappingVerification{}}
	conn, ok, err := v.Setup.Connection(ctx, workspaceID)
	if err != nil {
		return out, err
	}
	if ok {
		out.ConnectionState, out.Ready = conn.State, conn.Ready()
	}
	all, err := v.Setup.ListMappings(ctx, workspaceID)
	if err != nil {
		return out, err
	}
	var ms []controlplane.AdMapping
	for _, m := range all {
		if mappingID == "" || m.MappingID == mappingID {
			ms = append(ms, m)
		}
	}
	switch {
	case mappingID != "" && len(ms) == 0:
		return out, fmt.Errorf("%w: mapping %s", controlplane.ErrNotFound, mappingID)
	case !ok || !conn.Connected():
		out.Hint = "Connect the advertising account first (POST /api/admin/ads/connection)."
	case !out.Ready:
		out.Hint = "Select the conversion account (PUT /api/admin/ads/connection/account)."
	case len(ms) == 0:
		out.Hint = "Create a mapping (POST /api/admin/ads/mappings): a tracking source, a milestone and a conversion action."
	}
	if len(ms) == 0 {
		return out, nil
	}
	sources := make([]string, 0, len(ms))
	for _, m := range ms {
		sources = append(sources, m.SourceID)
	}
	pageViews, err := v.latestBySource(ctx, verifyPageViews, workspaceID, sources, false)
	if err != nil {
		return out, err
	}
	events, err := v.latestBySource(ctx, verifyServerEvents, workspaceID, sources, true)
	if err != nil {
		return out, err
	}
	queue, err := v.queue(ctx, workspaceID)
	if err != nil {
		return out, err
	}
	for _, m := range ms {
		out.Mappings = append(out.Mappings, verifyMapping(m, out.Ready, pageViews[m.SourceID], events[m.SourceID+"/"+m.Milestone], queue[m.MappingID]))
	}
	return out, nil
}

// latestBySource reads a (source[, name], time) query into a map keyed by source or source/name.
func (v *AdsVerifier) latestBySource(ctx context.Context, q, workspaceID string, sources []string, named bool) (map[string]time.Time, error) {
	rows, err := v.CH.Query(ctx, q, workspaceID, sources)
	if err != nil {
		return nil, fmt.Errorf("verification: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var source, name string
		var at time.Time
		dest := []any{&source, &at}
		if named {
			dest = []any{&source, &name, &at}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("verification: %w", err)
		}
		key := source
		if named {
			key += "/" + name
		}
		out[key] = at.UTC()
	}
	return out, rows.Err()
}

func (v *AdsVerifier) queue(ctx context.Context, workspaceID string) (map[string]queueFacts, error) {
	rows, err := v.CH.Query(ctx, verifyQueue, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("verification: %w", err)
	}
	defer rows.Close()
	out := map[string]queueFacts{}
	for rows.Next() {
		var id string
		var f queueFacts
		if err := rows.Scan(&id, &f.clickRows, &f.clickRow, &f.clickStatus, &f.clickReasons, &f.clickAt,
			&f.validatedRows, &f.validatedRow, &f.validatedAt, &f.acceptedRows, &f.acceptedRow, &f.acceptedAt,
			&f.acceptedDiagnostics, &f.unattributedRows); err != nil {
			return nil, fmt.Errorf("verification: %w", err)
		}
		out[id] = f
	}
	return out, rows.Err()
}

func seenAt(t time.Time) *time.Time {
	if t.Unix() <= 0 {
		return nil
	}
	u := t.UTC()
	return &u
}

// verifyMapping applies the order to what was read. pageView and event are zero when none was seen.
func verifyMapping(m controlplane.AdMapping, ready bool, pageView, event time.Time, q queueFacts) MappingVerification {
	mv := MappingVerification{MappingID: m.MappingID, SourceID: m.SourceID, Milestone: m.Milestone,
		ConversionActionID: m.ConversionActionID, Enabled: m.Enabled, ValidationOnly: m.ValidationOnly}
	switch {
	case !m.Enabled && m.Retired():
		mv.Blocker = "the mapping is disabled (" + m.DisabledReason + ") and cannot be re-enabled: create a new mapping with POST /api/admin/ads/mappings"
	case !m.Enabled:
		mv.Blocker = "the mapping is disabled (" + m.DisabledReason + "): re-enable it with PATCH /api/admin/ads/mappings/" + m.MappingID + ` {"enabled": true}`
	case !ready:
		mv.Blocker = "the advertising connection is not ready: connect and select the conversion account"
	}

	pv := VerificationStep{Step: StepPageView, Done: seenAt(pageView) != nil, At: seenAt(pageView)}
	if pv.Done {
		pv.Hint = "Page views arrive from tracking source " + m.SourceID + "."
	} else {
		pv.Hint = "No page view received from tracking source " + m.SourceID + ": check the script URL, the public key and the allowed " +
			"origins (revtrack admin tracking status)."
	}

	ev := VerificationStep{Step: StepVerifiedEvent, At: seenAt(event)}
	switch {
	case ev.At == nil:
		ev.Hint = fmt.Sprintf("Send a verified %s server event, with the acquisition ID the tracker captured, after your server has "+
			"verified it.", m.Milestone)
	case event.Before(m.CreatedAt):
		ev.Hint = fmt.Sprintf("The latest %s event occurred before the mapping was created; events before a mapping are never "+
			"uploaded: send a new one.", m.Milestone)
	default:
		ev.Done, ev.Hint = true, fmt.Sprintf("A verified %s event arrived after the mapping was created.", m.Milestone)
	}

	row := VerificationStep{Step: StepQueueRow, Done: q.clickRows > 0}
	switch {
	case row.Done:
		row.RowID, row.Status, row.ReasonCodes, row.At = q.clickRow, q.clickStatus, q.clickReasons, seenAt(q.clickAt)
		row.Hint = fmt.Sprintf("Row %s holds click evidence; its status is %s.", q.clickRow, q.clickStatus)
		if q.clickStatus == string(uploader.StatusRejected) {
			row.Hint += " It was rejected (" + strings.Join(q.clickReasons, ", ") + "): fix the cause, then Retry it " +
				"(POST /api/admin/ads/queue/" + q.clickRow + "/retry)."
		}
	case q.unattributedRows > 0:
		row.Hint = fmt.Sprintf("%d event(s) reached the queue unattributed: no gclid, gbraid or wbraid was captured for their "+
			"acquisition. Land a visit from an ad click with the tracker, then send the event with that visit's acquisition ID.", q.unattributedRows)
	default:
		row.Hint = "No event reached the upload queue for this mapping: an event is queued only while the mapping is enabled and the " +
			"connection ready, and only if it occurred after the mapping was created."
	}

	val := VerificationStep{Step: StepValidated, Done: q.validatedRows > 0 || q.acceptedRows > 0}
	switch {
	case q.validatedRows > 0:
		val.RowID, val.Status, val.At = q.validatedRow, string(uploader.StatusValidated), seenAt(q.validatedAt)
		val.Hint = "Row " + q.validatedRow + " was validated: the platform accepted it without applying a conversion."
	case q.acceptedRows > 0:
		val.Hint = "Rows were uploaded live without a validation pass."
	case !m.ValidationOnly:
		val.Hint = "Validation only is off, so rows upload live: turn it on to validate first."
	default:
		val.Hint = "A queued row is sent with Validation only within seconds; a rejection shows the platform's reason codes on the row."
	}

	vo := VerificationStep{Step: StepValidationOnlyOff, Done: !m.ValidationOnly}
	if vo.Done {
		vo.Hint = "Validation only is off: new events upload live."
	} else {
		vo.Hint = "Once a row is validated, turn Validation only off (PATCH /api/admin/ads/mappings/" + m.MappingID +
			` {"validationOnly": false}); validated rows are not replayed.`
	}

	live := VerificationStep{Step: StepLiveEvent, Done: q.acceptedRows > 0}
	if live.Done {
		live.RowID, live.Status, live.At = q.acceptedRow, string(uploader.StatusAccepted), seenAt(q.acceptedAt)
		live.Hint = "Row " + q.acceptedRow + " was accepted by the platform."
	} else {
		live.Hint = "Send a new verified event: only events queued after Validation only was turned off upload live."
	}

	done := VerificationStep{Step: StepPlatformConfirmed, Done: q.acceptedDiagnostics == uploader.DiagnosticsSuccess}
	switch {
	case done.Done:
		done.RowID, done.DiagnosticsStatus = q.acceptedRow, q.acceptedDiagnostics
		done.Hint = "The platform's diagnostics report SUCCESS; the conversion shows in the advertising platform once its reporting " +
			"catches up (this may take hours)."
	case q.acceptedRows == 0:
		done.Hint = "After a live upload, diagnostics are read from 30 minutes after acceptance."
	case q.acceptedDiagnostics == uploader.DiagnosticsOutcomeUnknown:
		done.RowID, done.DiagnosticsStatus = q.acceptedRow, q.acceptedDiagnostics
		done.Hint = "The advertising connection was disconnected before the platform's diagnostics of row " + q.acceptedRow +
			" could be read, so whether the conversion was applied is unknown: check it in Google Ads. To confirm a live " +
			"upload, connect again, create a new mapping and send a new event."
	case q.acceptedDiagnostics == uploader.DiagnosticsUnavailable:
		done.RowID, done.DiagnosticsStatus = q.acceptedRow, q.acceptedDiagnostics
		done.Hint = "The platform's diagnostics could not be read: check the conversion action's uploads in the advertising platform."
	default:
		done.RowID, done.DiagnosticsStatus = q.acceptedRow, q.acceptedDiagnostics
		done.Hint = "Processing: diagnostics are read from 30 minutes after acceptance; reporting on the advertising platform may take hours."
	}

	mv.Steps = []VerificationStep{pv, ev, row, val, vo, live, done}
	for _, s := range mv.Steps {
		if !s.Done {
			mv.Next = s.Step
			break
		}
	}
	return mv
}

// verification serves GET /api/admin/ads/verification[?mappingId=…].
func (h adsHandlers) verification(c *gin.Context) {
	v, err := h.Verifier.Verify(c.Request.Context(), authn.From(c).Workspace.ID, c.Query("mappingId"))
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}
