package controlplane

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// AdConversionAction is a cached conversion action of a conversion customer, as the advertising
// platform's account discovery listed it.
type AdConversionAction struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	RefreshedAt time.Time `json:"refreshedAt"`
}

// adActionRemoved marks a cached action the latest refresh no longer listed (the platform's own
// word for a deleted action), so the cache needs no delete.
const adActionRemoved = "REMOVED"

// AdConversionActions is the conversion-action cache.
type AdConversionActions struct{ s *Store }

// AdConversionActions returns the conversion-action cache of the store.
func (s *Store) AdConversionActions() *AdConversionActions { return &AdConversionActions{s: s} }

// List returns the cached actions of the workspace's conversion customer, by name.
func (a *AdConversionActions) List(ctx context.Context, workspaceID, conversionCustomerID string) ([]AdConversionAction, error) {
	rows, err := a.s.ch.Query(ctx, selectConversionActions, workspaceID, conversionCustomerID)
	if err != nil {
		return nil, fmt.Errorf("query conversion actions: %w", err)
	}
	defer rows.Close()
	out := []AdConversionAction{}
	for rows.Next() {
		var c AdConversionAction
		if err := rows.Scan(&c.ID, &c.Name, &c.Status, &c.RefreshedAt); err != nil {
			return nil, fmt.Errorf("scan conversion action: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Replace makes actions the cached list of the conversion customer: listed actions are written
// with the refresh time, cached ones no longer listed are marked removed. The refresh is audited.
func (a *AdConversionActions) Replace(ctx context.Context, actor, workspaceID, conversionCustomerID string, actions []AdConversionAction) ([]AdConversionAction, error) {
	old, err := a.List(ctx, workspaceID, conversionCustomerID)
	if err != nil {
		return nil, err
	}
	now := a.s.now().UTC().Truncate(time.Second)
	listed := map[string]bool{}
	var rows [][]any
	for _, c := range actions {
		if c.ID == "" || listed[c.ID] {
			continue
		}
		listed[c.ID] = true
		rows = append(rows, []any{workspaceID, conversionCustomerID, c.ID, c.Name, c.Status, now, a.s.version()})
	}
	removed := 0
	for _, c := range old {
		if !listed[c.ID] {
			removed++
			rows = append(rows, []any{workspaceID, conversionCustomerID, c.ID, c.Name, adActionRemoved, now, a.s.version()})
		}
	}
	if len(rows) > 0 {
		if err := a.s.insert(ctx, insertConversionAction, rows...); err != nil {
			return nil, fmt.Errorf("write conversion actions: %w", err)
		}
	}
	if err := a.s.Audit(ctx, AuditEntry{WorkspaceID: workspaceID, Actor: actor, Action: "ads_conversion_actions.refresh",
		TargetType: "conversion_customer", TargetID: conversionCustomerID, Details: map[string]string{
			"listed": strconv.Itoa(len(listed)), "removed": strconv.Itoa(removed)}}); err != nil {
		return nil, err
	}
	return a.List(ctx, workspaceID, conversionCustomerID)
}

// Get returns one cached action, or ErrNotFound.
func (a *AdConversionActions) Get(ctx context.Context, workspaceID, conversionCustomerID, actionID string) (AdConversionAction, error) {
	cs, err := a.List(ctx, workspaceID, conversionCustomerID)
	if err != nil {
		return AdConversionAction{}, err
	}
	for _, c := range cs {
		if c.ID == actionID {
			return c, nil
		}
	}
	return AdConversionAction{}, fmt.Errorf("%w: conversion action %s of customer %s", ErrNotFound, actionID, conversionCustomerID)
}
