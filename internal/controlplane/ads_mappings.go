package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// AdMilestones are the server-event names a mapping may upload (spec Events 5), in funnel order.
var AdMilestones = []string{"install", "trial_started", "trial_converted", "qualified", "paid"}

// AdMapping sends one milestone of one tracking source to one conversion action. The mapping rules
// (what may be created or changed when) live in the uploader's setup service; this is storage.
type AdMapping struct {
	MappingID    string `json:"mappingId"`
	WorkspaceID  string `json:"workspaceId"`
	ConnectionID string `json:"connectionId"`
	SourceID     string `json:"sourceId"`
	Milestone    string `json:"milestone"`
	// ConversionActionID is the action's numeric ID (never a resource name).
	ConversionActionID   string `json:"conversionActionId"`
	ConversionActionName string `json:"conversionActionName"`
	// FixedValueCents and FixedCurrency are both set or both empty; when empty the event's own
	// amount is sent, if it has a valid one.
	FixedValueCents  *int64 `json:"fixedValueCents,omitempty"`
	FixedCurrency    string `json:"fixedCurrency,omitempty"`
	ConsentConfirmed bool   `json:"consentConfirmed"`
	// ValidationOnly sends events with validateOnly; it is read at send time.
	ValidationOnly bool `json:"validationOnly"`
	Enabled        bool `json:"enabled"`
	// DisabledReason says why a mapping was disabled (account changed, disconnected, by a user).
	DisabledReason string `json:"disabledReason,omitempty"`
	// CreatedAt bounds the events the mapping uploads: events before it are never uploaded.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AdMappings stores ad mappings.
type AdMappings struct{ s *Store }

// AdMappings returns the ad-mapping view of the store.
func (s *Store) AdMappings() *AdMappings { return &AdMappings{s: s} }

// Get returns one mapping of the workspace, or ErrNotFound.
func (m *AdMappings) Get(ctx context.Context, workspaceID, mappingID string) (AdMapping, error) {
	ms, err := m.query(ctx, selectAdMapping, workspaceID, mappingID)
	if err != nil {
		return AdMapping{}, err
	}
	if len(ms) == 0 {
		return AdMapping{}, fmt.Errorf("%w: ad mapping %s", ErrNotFound, mappingID)
	}
	return ms[0], nil
}

// List returns the workspace's mappings, oldest first, enabled or not.
func (m *AdMappings) List(ctx context.Context, workspaceID string) ([]AdMapping, error) {
	return m.query(ctx, selectAdMappings, workspaceID)
}

// ListEnabled returns every workspace's enabled mappings. Whether the workspace is connected is
// the caller's check (AdConnections.Get).
func (m *AdMappings) ListEnabled(ctx context.Context) ([]AdMapping, error) {
	return m.query(ctx, selectEnabledMapping)
}

func (m *AdMappings) query(ctx context.Context, q string, args ...any) ([]AdMapping, error) {
	rows, err := m.s.ch.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query ad mappings: %w", err)
	}
	defer rows.Close()
	var out []AdMapping
	for rows.Next() {
		var a AdMapping
		var value int64
		var consent, validation, enabled uint8
		if err := rows.Scan(&a.MappingID, &a.WorkspaceID, &a.ConnectionID, &a.SourceID, &a.Milestone, &a.ConversionActionID,
			&a.ConversionActionName, &value, &a.FixedCurrency, &consent, &validation, &enabled, &a.DisabledReason,
			&a.CreatedAt, &a.UpdatedAt); err != nil {
			return nil, fmt.Errorf("scan ad mapping: %w", err)
		}
		if value > 0 {
			a.FixedValueCents = &value
		}
		a.ConsentConfirmed, a.ValidationOnly, a.Enabled = consent == 1, validation == 1, enabled == 1
		out = append(out, a)
	}
	return out, rows.Err()
}

// Create stores a new mapping with a new ID; its creation time is now. The caller has applied the
// mapping rules.
func (m *AdMappings) Create(ctx context.Context, actor string, a AdMapping) (AdMapping, error) {
	if a.WorkspaceID == "" || a.SourceID == "" || a.ConnectionID == "" {
		return AdMapping{}, fmt.Errorf("%w: a mapping needs a workspace, a connection and a tracking source", ErrInvalid)
	}
	if !slices.Contains(AdMilestones, a.Milestone) {
		return AdMapping{}, fmt.Errorf("%w: milestone %q", ErrInvalid, a.Milestone)
	}
	a.MappingID = uuid.Must(uuid.NewV7()).String()
	a.CreatedAt = m.s.now().UTC().Truncate(time.Second)
	a, err := m.write(ctx, a)
	if err != nil {
		return AdMapping{}, err
	}
	return a, m.audit(ctx, actor, "ads_mapping.create", a, mappingFields(a))
}

// Update writes a new version of an existing mapping (its ID, workspace, source, milestone and
// creation time are kept). The audit entry names the changed fields with their new and previous
// values; its action says what kind of change it was (enable, disable, validation_only, update).
// Nothing is written when nothing changed.
func (m *AdMappings) Update(ctx context.Context, actor string, a AdMapping) (AdMapping, error) {
	old, err := m.Get(ctx, a.WorkspaceID, a.MappingID)
	if err != nil {
		return AdMapping{}, err
	}
	a.SourceID, a.Milestone, a.CreatedAt = old.SourceID, old.Milestone, old.CreatedAt
	if a.Enabled {
		a.DisabledReason = ""
	}
	before, after := mappingFields(old), mappingFields(a)
	details := map[string]string{}
	for k, v := range after {
		if before[k] != v {
			details[k], details[k+"Before"] = v, before[k]
		}
	}
	if len(details) == 0 {
		return old, nil
	}
	action := "ads_mapping.update"
	switch {
	case old.Enabled && !a.Enabled:
		action = "ads_mapping.disable"
	case !old.Enabled && a.Enabled:
		action = "ads_mapping.enable"
	case len(details) == 2 && details["validationOnly"] != "":
		action = "ads_mapping.validation_only"
	}
	if a, err = m.write(ctx, a); err != nil {
		return AdMapping{}, err
	}
	return a, m.audit(ctx, actor, action, a, details)
}

// DisableAll disables every enabled mapping of the workspace, recording reason, and returns them.
func (m *AdMappings) DisableAll(ctx context.Context, actor, workspaceID, reason string) ([]AdMapping, error) {
	ms, err := m.List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	var out []AdMapping
	for _, a := range ms {
		if !a.Enabled {
			continue
		}
		a.Enabled, a.DisabledReason = false, reason
		if a, err = m.Update(ctx, actor, a); err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (m *AdMappings) write(ctx context.Context, a AdMapping) (AdMapping, error) {
	a.UpdatedAt = m.s.now().UTC().Truncate(time.Second)
	if err := m.s.insert(ctx, insertAdMapping, []any{a.MappingID, a.WorkspaceID, a.ConnectionID, a.SourceID, a.Milestone,
		a.ConversionActionID, a.ConversionActionName, a.FixedValueCents, a.FixedCurrency, boolByte(a.ConsentConfirmed),
		boolByte(a.ValidationOnly), boolByte(a.Enabled), a.DisabledReason, a.CreatedAt, a.UpdatedAt, m.s.version()}); err != nil {
		return AdMapping{}, fmt.Errorf("write ad mapping: %w", err)
	}
	return a, nil
}

// mappingFields is the audited form of a mapping.
func mappingFields(a AdMapping) map[string]string {
	value := ""
	if a.FixedValueCents != nil {
		value = strconv.FormatInt(*a.FixedValueCents, 10)
	}
	return map[string]string{"connectionId": a.ConnectionID, "sourceId": a.SourceID, "milestone": a.Milestone,
		"conversionActionId": a.ConversionActionID, "conversionActionName": a.ConversionActionName,
		"fixedValueCents": value, "fixedCurrency": a.FixedCurrency, "consentConfirmed": strconv.FormatBool(a.ConsentConfirmed),
		"validationOnly": strconv.FormatBool(a.ValidationOnly), "enabled": strconv.FormatBool(a.Enabled),
		"disabledReason": a.DisabledReason}
}

func (m *AdMappings) audit(ctx context.Context, actor, action string, a AdMapping, details map[string]string) error {
	return m.s.Audit(ctx, AuditEntry{WorkspaceID: a.WorkspaceID, Actor: actor, Action: action, TargetType: "ad_mapping",
		TargetID: a.MappingID, Details: details})
}
