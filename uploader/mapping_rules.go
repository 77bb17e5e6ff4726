package uploader

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/revtrack/revtrack/controlplane"
)

// MappingInput is a new mapping (docs/ADS_UPLOAD.md, "Mappings").
type MappingInput struct {
	// SourceID is a tracking source of the workspace, of one of its selected apps.
	SourceID string `json:"sourceId"`
	// Milestone is install, trial_started, trial_converted, qualified or paid.
	Milestone string `json:"milestone"`
	// ConversionActionID is the action's numeric ID; a resource name is refused.
	ConversionActionID string `json:"conversionActionId"`
	// ConversionActionName may be empty when the action is in the discovered list.
	ConversionActionName string `json:"conversionActionName"`
	// FixedValueCents and FixedCurrency: both or neither. Without them the event's own valid
	// amount is sent.
	FixedValueCents *int64 `json:"fixedValueCents,omitempty"`
	FixedCurrency   string `json:"fixedCurrency,omitempty"`
	// ConsentConfirmed is the user's confirmation of consent and of the processing policy; it
	// must be true.
	ConsentConfirmed bool `json:"consentConfirmed"`
	// ValidationOnly defaults to true.
	ValidationOnly *bool `json:"validationOnly,omitempty"`
}

// MappingUpdate changes a mapping; nil fields are left as they are. The tracking source and
// milestone of a mapping never change (create another mapping instead).
type MappingUpdate struct {
	ConversionActionID   *string `json:"conversionActionId,omitempty"`
	ConversionActionName *string `json:"conversionActionName,omitempty"`
	FixedValueCents      *int64  `json:"fixedValueCents,omitempty"`
	FixedCurrency        *string `json:"fixedCurrency,omitempty"`
	// ClearFixedValue removes the fixed value and currency.
	ClearFixedValue  bool  `json:"clearFixedValue,omitempty"`
	ConsentConfirmed *bool `json:"consentConfirmed,omitempty"`
	// Enabled disables a mapping, or re-enables a disabled one (only while connected with a
	// conversion account selected).
	Enabled *bool `json:"enabled,omitempty"`
}

var (
	conversionActionIDRe   = regexp.MustCompile(`^[0-9]{1,20}$`)
	conversionActionRNRe   = regexp.MustCompile(`^customers/[0-9-]+/conversionActions/([0-9]+)$`)
	mappingCurrencyRe      = regexp.MustCompile(`^[A-Z]{3}$`)
	maxConversionActionLen = 256
)

// normalizeMilestone accepts the milestone written as words ("trial started") as well as the event
// name (docs/ADS_UPLOAD.md, "Mappings").
func normalizeMilestone(m string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(m)))
}

// checkMapping applies the field rules to a whole mapping (new, or an existing one after an
// update), normalising the action name and currency.
func checkMapping(m *controlplane.AdMapping) error {
	if !slices.Contains(controlplane.AdMilestones, m.Milestone) {
		return fmt.Errorf("%w: milestone %q: want one of %s", ErrInvalid, m.Milestone, strings.Join(controlplane.AdMilestones, ", "))
	}
	m.ConversionActionID = strings.TrimSpace(m.ConversionActionID)
	if sub := conversionActionRNRe.FindStringSubmatch(m.ConversionActionID); sub != nil {
		return fmt.Errorf("%w: conversion action %q is a resource name: give only the numeric ID (%s)", ErrInvalid, m.ConversionActionID, sub[1])
	}
	if !conversionActionIDRe.MatchString(m.ConversionActionID) {
		return fmt.Errorf("%w: conversion action ID %q: want the action's numeric ID (1 to 20 digits)", ErrInvalid, m.ConversionActionID)
	}
	m.ConversionActionName = strings.TrimSpace(m.ConversionActionName)
	if m.ConversionActionName == "" {
		return fmt.Errorf("%w: conversion action name is required (the action %s is not among the discovered actions)", ErrInvalid, m.ConversionActionID)
	}
	if len(m.ConversionActionName) > maxConversionActionLen || strings.ContainsFunc(m.ConversionActionName, unicode.IsControl) {
		return fmt.Errorf("%w: conversion action name: at most %d characters, no control characters", ErrInvalid, maxConversionActionLen)
	}
	m.FixedCurrency = strings.ToUpper(strings.TrimSpace(m.FixedCurrency))
	switch {
	case m.FixedValueCents == nil && m.FixedCurrency == "":
	case m.FixedValueCents == nil || m.FixedCurrency == "":
		return fmt.Errorf("%w: fixed value and currency go together: give both (value in minor units and a three-letter currency) or neither", ErrInvalid)
	case *m.FixedValueCents <= 0:
		return fmt.Errorf("%w: fixed value %d: want a positive integer in minor units (cents)", ErrInvalid, *m.FixedValueCents)
	case !mappingCurrencyRe.MatchString(m.FixedCurrency):
		return fmt.Errorf("%w: fixed currency %q: want a three-letter code such as USD", ErrInvalid, m.FixedCurrency)
	}
	if !m.ConsentConfirmed {
		return fmt.Errorf("%w: confirm that the uploaded events have the users' consent and follow the platform's processing policy (consentConfirmed: true)", ErrInvalid)
	}
	return nil
}

// applyUpdate returns m with the update's fields applied.
func applyUpdate(m controlplane.AdMapping, u MappingUpdate) controlplane.AdMapping {
	if u.ConversionActionID != nil && strings.TrimSpace(*u.ConversionActionID) != m.ConversionActionID {
		m.ConversionActionID = *u.ConversionActionID
		if u.ConversionActionName == nil {
			m.ConversionActionName = "" // filled from the discovered actions, or required
		}
	}
	if u.ConversionActionName != nil {
		m.ConversionActionName = *u.ConversionActionName
	}
	if u.ClearFixedValue {
		m.FixedValueCents, m.FixedCurrency = nil, ""
	}
	if u.FixedValueCents != nil {
		v := *u.FixedValueCents
		m.FixedValueCents = &v
	}
	if u.FixedCurrency != nil {
		m.FixedCurrency = *u.FixedCurrency
	}
	if u.ConsentConfirmed != nil {
		m.ConsentConfirmed = *u.ConsentConfirmed
	}
	if u.Enabled != nil {
		m.Enabled = *u.Enabled
	}
	return m
}
