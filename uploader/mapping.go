package uploader

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/revtrack/revtrack/controlplane"
)

// CreateMapping adds an enabled mapping to the workspace's connected conversion account. It
// uploads no past event: the queue compares each event's time with the mapping's creation time.
// Validation only is on unless the input turns it off.
func (s *Setup) CreateMapping(ctx context.Context, actor, workspaceID string, in MappingInput) (controlplane.AdMapping, error) {
	m := controlplane.AdMapping{WorkspaceID: workspaceID, SourceID: in.SourceID, Milestone: normalizeMilestone(in.Milestone),
		ConversionActionID: in.ConversionActionID, ConversionActionName: in.ConversionActionName,
		FixedValueCents: in.FixedValueCents, FixedCurrency: in.FixedCurrency, ConsentConfirmed: in.ConsentConfirmed,
		ValidationOnly: in.ValidationOnly == nil || *in.ValidationOnly, Enabled: true}
	if m.SourceID == "" {
		return controlplane.AdMapping{}, fmt.Errorf("%w: tracking source is required", ErrInvalid)
	}
	// The field rules first, so a bad request is reported as such whatever the connection's state;
	// the name may still come from the discovered actions.
	early := m
	if early.ConversionActionName == "" {
		early.ConversionActionName = "-"
	}
	if err := checkMapping(&early); err != nil {
		return controlplane.AdMapping{}, err
	}
	unlock, err := s.lock(ctx, workspaceID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	defer unlock()
	if err := s.checkSource(ctx, workspaceID, m.SourceID); err != nil {
		return controlplane.AdMapping{}, err
	}
	c, err := s.ready(ctx, workspaceID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	m.ConnectionID = c.ConnectionID
	if err := s.completeAndCheck(ctx, c, &m); err != nil {
		return controlplane.AdMapping{}, err
	}
	return s.mappings.Create(ctx, actor, m)
}

// UpdateMapping edits a mapping's action, fixed value or consent, disables it, or re-enables it.
// Re-enabling needs a connection with a conversion account selected, and is refused (ErrConflict)
// for a mapping an account change or a disconnection disabled, or one of an earlier connection:
// queued rows of such a mapping would otherwise go to an account or grant they were not meant for
// (docs/ADS_UPLOAD.md, "Mappings": no new uploads until a new connection and mapping exist).
func (s *Setup) UpdateMapping(ctx context.Context, actor, workspaceID, mappingID string, u MappingUpdate) (controlplane.AdMapping, error) {
	unlock, err := s.lock(ctx, workspaceID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	defer unlock()
	old, err := s.mappings.Get(ctx, workspaceID, mappingID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	m := applyUpdate(old, u)
	c, ok, err := s.conns.Get(ctx, workspaceID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	switch {
	case m.Enabled && !old.Enabled:
		if err := reenableable(old, c, ok); err != nil {
			return controlplane.AdMapping{}, err
		}
		if c, err = s.ready(ctx, workspaceID); err != nil {
			return controlplane.AdMapping{}, fmt.Errorf("re-enable mapping: %w", err)
		}
		if err := s.checkSource(ctx, workspaceID, m.SourceID); err != nil {
			return controlplane.AdMapping{}, err
		}
		m.ConnectionID = c.ConnectionID // the same one, or none recorded
	case !m.Enabled && old.Enabled:
		m.DisabledReason, m.DisabledCause = controlplane.UserDisabledReason(actor), controlplane.AdDisabledByUser
	}
	if !ok || !c.Ready() {
		c = controlplane.AdConnection{} // no account: no discovered names to fill in
	}
	if err := s.completeAndCheck(ctx, c, &m); err != nil {
		return controlplane.AdMapping{}, err
	}
	return s.mappings.Update(ctx, actor, m)
}

// reenableable refuses re-enabling a mapping that an account change or a disconnection disabled, or
// that belongs to an earlier connection of the workspace (c, when ok).
func reenableable(old controlplane.AdMapping, c controlplane.AdConnection, ok bool) error {
	earlier := ok && old.ConnectionID != "" && old.ConnectionID != c.ConnectionID
	if !old.Retired() && !earlier {
		return nil
	}
	why := old.DisabledReason
	if why == "" || !old.Retired() {
		why = "it belongs to an earlier advertising connection"
	}
	return fmt.Errorf("%w: mapping %s cannot be re-enabled (%s): a mapping disabled by a disconnection or an account change "+
		"never uploads again; create a new mapping for the current connection and account", ErrConflict, old.MappingID, why)
}

// SetValidationOnly turns Validation only on or off. Turning it off does not replay rows: a row
// filed while it was on is only ever sent validate-only, and only events filed afterwards upload
// live. Turning it on sends every row validate-only from then on.
func (s *Setup) SetValidationOnly(ctx context.Context, actor, workspaceID, mappingID string, on bool) (controlplane.AdMapping, error) {
	unlock, err := s.lock(ctx, workspaceID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	defer unlock()
	m, err := s.mappings.Get(ctx, workspaceID, mappingID)
	if err != nil {
		return controlplane.AdMapping{}, err
	}
	m.ValidationOnly = on
	return s.mappings.Update(ctx, actor, m)
}

// ListMappings returns the workspace's mappings, enabled or not, oldest first.
func (s *Setup) ListMappings(ctx context.Context, workspaceID string) ([]controlplane.AdMapping, error) {
	ms, err := s.mappings.List(ctx, workspaceID)
	if ms == nil && err == nil {
		ms = []controlplane.AdMapping{}
	}
	return ms, err
}

// GetMapping returns one mapping of the workspace, or ErrNotFound.
func (s *Setup) GetMapping(ctx context.Context, workspaceID, mappingID string) (controlplane.AdMapping, error) {
	return s.mappings.Get(ctx, workspaceID, mappingID)
}

// checkSource: the tracking source must be the workspace's and belong to one of its selected apps.
func (s *Setup) checkSource(ctx context.Context, workspaceID, sourceID string) error {
	src, err := s.store.SourceByID(ctx, workspaceID, sourceID)
	if errors.Is(err, controlplane.ErrNotFound) {
		return fmt.Errorf("%w: tracking source %q is not a source of this workspace", ErrInvalid, sourceID)
	}
	if err != nil {
		return err
	}
	w, err := s.store.Workspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	if !slices.Contains(w.SelectedAppIDs, src.AppID) {
		return fmt.Errorf("%w: tracking source %q belongs to app %q, which is not one of the workspace's selected apps", ErrInvalid, sourceID, src.AppID)
	}
	return nil
}

// completeAndCheck fills an empty action name from the discovered actions of the connection's
// account (c may be empty), applies the field rules and, for an enabled mapping, refuses a second
// enabled mapping of the same source, milestone and action, which would upload each event twice.
func (s *Setup) completeAndCheck(ctx context.Context, c controlplane.AdConnection, m *controlplane.AdMapping) error {
	if m.ConversionActionName == "" && c.ConversionCustomerID != "" && conversionActionIDRe.MatchString(m.ConversionActionID) {
		a, err := s.actions.Get(ctx, m.WorkspaceID, c.ConversionCustomerID, m.ConversionActionID)
		if err != nil && !errors.Is(err, controlplane.ErrNotFound) {
			return err
		}
		m.ConversionActionName = a.Name
	}
	if err := checkMapping(m); err != nil {
		return err
	}
	if !m.Enabled {
		return nil
	}
	all, err := s.mappings.List(ctx, m.WorkspaceID)
	if err != nil {
		return err
	}
	for _, o := range all {
		if o.Enabled && o.MappingID != m.MappingID && o.SourceID == m.SourceID && o.Milestone == m.Milestone &&
			o.ConversionActionID == m.ConversionActionID {
			return fmt.Errorf("%w: mapping %s already sends %s of this source to conversion action %s", ErrConflict,
				o.MappingID, m.Milestone, m.ConversionActionID)
		}
	}
	return nil
}
