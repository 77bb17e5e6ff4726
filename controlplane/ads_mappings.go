package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AdMilestones are the server-event names a mapping may upload (docs/ADS_UPLOAD.md, "Mappings"), in
// funnel order.
var AdMilestones = []string{"install", "trial_started", "trial_converted", "qualified", "paid"}

// Why a mapping was disabled (AdMapping.DisabledCause).
const (
	// AdDisabledByUser: a user disabled the mapping; it may be re-enabled on the same connection
	// and account.
	AdDisabledByUser = "user"
	// AdDisabledByAccountChange: the connection's conversion or manager account changed; the
	// mapping names an action of the previous account and never comes back.
	AdDisabledByAccountChange = "account_change"
	// AdDisabledByDisconnect: the connection was disconnected; no upload goes through its mappings
	// again (docs/ADS_UPLOAD.md, "Mappings": no new uploads until a new connection and mapping exist).
	AdDisabledByDisconnect = "disconnect"
)

// userDisabledPrefix starts the disabled reason the setup writes for a user's disable; mappings
// disabled before DisabledCause existed are told apart by it.
const userDisabledPrefix = "disabled by "

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
	// ValidationOnly: events filed while it is on are sent with validateOnly, even when sent after it
	// was turned off (the upload row records it when filed); while it is on, nothing is sent live.
	ValidationOnly bool `json:"validationOnly"`
	Enabled        bool `json:"enabled"`
	// DisabledReason says why a mapping was disabled (account changed, disconnected, by a user).
	DisabledReason string `json:"disabledReason,omitempty"`
	// DisabledCause is user, account_change or disconnect while disabled, empty while enabled.
	DisabledCause string `json:"disabledCause,omitempty"`
	// CreatedAt bounds the events the mapping uploads: events before it are never uploaded.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Retired reports whether a disabled mapping can never be re-enabled: the account changed or the
// connection ended after it was made. A mapping disabled before DisabledCause was stored counts as
// retired unless its reason is a user's disable.
func (a AdMapping) Retired() bool {
	if a.Enabled {
		return false
	}
	switch a.DisabledCause {
	case AdDisabledByAccountChange, AdDisabledByDisconnect:
		return true
	case AdDisabledByUser:
		return false
	}
	return a.DisabledReason != "" && !strings.HasPrefix(a.DisabledReason, userDisabledPrefix)
}

// UserDisabledReason is the disabled reason of a mapping actor disabled.
func UserDisabledReason(actor string) string { return userDisabledPrefix + actor }

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
			&a.CreatedAt, &a.UpdatedAt, &a.DisabledCause); err != nil {
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
		a.DisabledReason, a.DisabledCause = "", ""
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

// DisableAll disables every enabled mapping of the workspace, recording cause (account_change or
// disconnect) and reason, and returns them. Mappings a user had disabled get the same cause and
// reason, so that none of them can be re-enabled against the new account or connection either.
func (m *AdMappings) DisableAll(ctx context.Context, actor, workspaceID, cause, reason string) ([]AdMapping, error) {
	if cause != AdDisabledByAccountChange && cause != AdDisabledByDisconnect {
		return nil, fmt.Errorf("%w: disable cause %q", ErrInvalid, cause)
	}
	ms, err := m.List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	var out []AdMapping
	for _, a := range ms {
		if a.Retired() {
			continue
		}
		enabled := a.Enabled
		a.Enabled, a.DisabledReason, a.DisabledCause = false, reason, cause
		if a, err = m.Update(ctx, actor, a); err != nil {
			return out, err
		}
		if enabled {
			out = append(out, a)
		}
	}
	return out, nil
}

func (m *AdMappings) write(ctx context.Context, a AdMapping) (AdMapping, error) {
	a.UpdatedAt = m.s.now().UTC().Truncate(time.Second)
	if err := m.s.insert(ctx, insertAdMapping, []any{a.MappingID, a.WorkspaceID, a.ConnectionID, a.SourceID, a.Milestone,
		a.ConversionActionID, a.ConversionActionName, a.FixedValueCents, a.FixedCurrency, boolByte(a.ConsentConfirmed),
		boolByte(a.ValidationOnly), boolByte(a.Enabled), a.DisabledReason, a.CreatedAt, a.UpdatedAt, m.s.version(),
		a.DisabledCause}); err != nil {
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
		"disabledReason": a.DisabledReason, "disabledCause": a.DisabledCause}
}

func (m *AdMappings) audit(ctx context.Context, actor, action string, a AdMapping, details map[string]string) error {
	return m.s.Audit(ctx, AuditEntry{WorkspaceID: a.WorkspaceID, Actor: actor, Action: action, TargetType: "ad_mapping",
		TargetID: a.MappingID, Details: details})
}
