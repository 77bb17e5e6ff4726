package uploader

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/revtrack/revtrack/controlplane"
)

// AccountSelection is the outcome of selecting the conversion account.
type AccountSelection struct {
	Connection controlplane.AdConnection `json:"connection"`
	// DisabledMappings are the mappings the change of account disabled (none when the account
	// did not change).
	DisabledMappings []controlplane.AdMapping `json:"disabledMappings"`
	// Actions are the account's conversion actions: freshly listed when discovery is configured,
	// otherwise whatever is cached.
	Actions []controlplane.AdConversionAction `json:"actions"`
	// ActionsError says why the actions could not be listed; the selection stands regardless
	// (for example a manager that does not manage the conversion account is reported here).
	ActionsError string `json:"actionsError,omitempty"`
}

// normalizeCustomerID accepts a customer ID as Google's interface shows it (123-456-7890) or as
// digits; an ID that is not 10 digits is left for the control plane to reject by name.
func normalizeCustomerID(id string) string {
	return strings.ReplaceAll(strings.TrimSpace(id), "-", "")
}

// SelectAccount sets the conversion customer and the optional manager login customer (10 digits
// each). Changing either disables every enabled mapping (their disabled reason names the change),
// since they name conversion actions of the previous account; none of the workspace's mappings can
// be re-enabled afterwards, new ones must be made for the new account. Then, when discovery is configured,
// the account's conversion actions are listed through the login customer.
func (s *Setup) SelectAccount(ctx context.Context, actor, workspaceID, conversionCustomerID, loginCustomerID string) (AccountSelection, error) {
	conversionCustomerID, loginCustomerID = normalizeCustomerID(conversionCustomerID), normalizeCustomerID(loginCustomerID)
	if !controlplane.AdCustomerIDRe.MatchString(conversionCustomerID) {
		return AccountSelection{}, fmt.Errorf("%w: conversion customer ID %q: want the 10-digit ID of the account that owns the conversion action", ErrInvalid, conversionCustomerID)
	}
	if loginCustomerID != "" && !controlplane.AdCustomerIDRe.MatchString(loginCustomerID) {
		return AccountSelection{}, fmt.Errorf("%w: manager login customer ID %q: want the 10-digit ID of the manager account, or none", ErrInvalid, loginCustomerID)
	}
	unlock, err := s.lock(ctx, workspaceID)
	if err != nil {
		return AccountSelection{}, err
	}
	defer unlock()
	old, ok, err := s.conns.Get(ctx, workspaceID)
	if err != nil {
		return AccountSelection{}, err
	}
	if !ok || !old.Connected() {
		return AccountSelection{}, fmt.Errorf("%w: the workspace has no advertising connection: connect first", ErrConflict)
	}
	var sel AccountSelection
	if old.ConversionCustomerID != conversionCustomerID || old.LoginCustomerID != loginCustomerID {
		// Mappings first: should the account write fail, they stay disabled, never enabled
		// against an account they were not made for.
		reason := accountChangeReason(old, conversionCustomerID, loginCustomerID)
		if sel.DisabledMappings, err = s.mappings.DisableAll(ctx, actor, workspaceID, controlplane.AdDisabledByAccountChange, reason); err != nil {
			return AccountSelection{}, err
		}
	}
	if sel.Connection, _, err = s.conns.SelectAccount(ctx, actor, workspaceID, conversionCustomerID, loginCustomerID); err != nil {
		return AccountSelection{}, err
	}
	if sel.DisabledMappings == nil {
		sel.DisabledMappings = []controlplane.AdMapping{}
	}
	if !s.DiscoveryConfigured() {
		sel.Actions, err = s.actions.List(ctx, workspaceID, conversionCustomerID)
		return sel, err
	}
	if sel.Actions, err = s.refreshActions(ctx, actor, sel.Connection); err != nil {
		sel.Actions, sel.ActionsError = []controlplane.AdConversionAction{}, err.Error()
		s.log.Info("conversion actions not listed after account selection", "workspace", workspaceID, "err", err)
	}
	return sel, nil
}

func accountChangeReason(old controlplane.AdConnection, conversion, login string) string {
	var parts []string
	if old.ConversionCustomerID != conversion {
		parts = append(parts, fmt.Sprintf("conversion account changed from %s to %s", customerOrNone(old.ConversionCustomerID), conversion))
	}
	if old.LoginCustomerID != login {
		parts = append(parts, fmt.Sprintf("manager login account changed from %s to %s", customerOrNone(old.LoginCustomerID), customerOrNone(login)))
	}
	return strings.Join(parts, "; ")
}

func customerOrNone(id string) string {
	if id == "" {
		return "none"
	}
	return id
}

// RefreshActions lists the conversion account's uploadable actions (enabled, click imports) from
// the platform and replaces the cache with them.
func (s *Setup) RefreshActions(ctx context.Context, actor, workspaceID string) ([]controlplane.AdConversionAction, error) {
	if !s.DiscoveryConfigured() {
		return nil, fmt.Errorf("%w: conversion-action discovery is off (no OAuth client or --ads-account-discovery=false): enter the action's numeric ID and name",
			ErrNotConfigured)
	}
	c, err := s.ready(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return s.refreshActions(ctx, actor, c)
}

func (s *Setup) refreshActions(ctx context.Context, actor string, c controlplane.AdConnection) ([]controlplane.AdConversionAction, error) {
	token, err := s.conns.RefreshToken(ctx, c.WorkspaceID)
	if err != nil {
		return nil, err
	}
	listed, err := s.discovery.ConversionActions(ctx, s.oauth.TokenSource(ctx, token), c.ConversionCustomerID, c.LoginCustomerID)
	if err != nil {
		err = googleFailure("list conversion actions", err, token)
		if errors.Is(err, ErrConflict) {
			if _, serr := s.conns.SetLastError(ctx, actor, c.WorkspaceID, err.Error()); serr != nil {
				s.log.Warn("record ads connection error", "workspace", c.WorkspaceID, "err", serr)
			}
		}
		return nil, err
	}
	actions := make([]controlplane.AdConversionAction, 0, len(listed))
	for _, a := range listed {
		actions = append(actions, controlplane.AdConversionAction{ID: a.ID, Name: a.Name, Status: a.Status})
	}
	return s.actions.Replace(ctx, actor, c.WorkspaceID, c.ConversionCustomerID, actions)
}

// ListActions returns the cached conversion actions of the workspace's conversion account.
func (s *Setup) ListActions(ctx context.Context, workspaceID string) ([]controlplane.AdConversionAction, error) {
	c, err := s.ready(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return s.actions.List(ctx, workspaceID, c.ConversionCustomerID)
}

// ready returns the connection when it is connected with a conversion account, else ErrConflict.
func (s *Setup) ready(ctx context.Context, workspaceID string) (controlplane.AdConnection, error) {
	c, ok, err := s.conns.Get(ctx, workspaceID)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	switch {
	case !ok || !c.Connected():
		return controlplane.AdConnection{}, fmt.Errorf("%w: the workspace has no advertising connection: connect first", ErrConflict)
	case c.ConversionCustomerID == "":
		return controlplane.AdConnection{}, fmt.Errorf("%w: no conversion account is selected: select the conversion customer first", ErrConflict)
	}
	return c, nil
}
