package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Audit appends one entry. Every control-plane change calls it after the change is stored.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	at := s.now().UTC()
	details, err := json.Marshal(e.Details)
	if err != nil {
		return err
	}
	if e.Details == nil {
		details = []byte("{}")
	}
	err = s.insert(ctx, insertAudit, []any{at.Truncate(time.Second), uint16(at.Nanosecond() / 1e6), uuid.Must(uuid.NewV7()).String(),
		e.WorkspaceID, e.Actor, e.Action, e.TargetType, e.TargetID, string(details)})
	if err != nil {
		return fmt.Errorf("write audit entry %s: %w", e.Action, err)
	}
	return nil
}

// AuditLog returns a workspace's newest entries first.
func (s *Store) AuditLog(ctx context.Context, workspaceID string, limit int) ([]AuditEntry, error) {
	rows, err := s.ch.Query(ctx, selectAudit, workspaceID, uint64(limit))
	if err != nil {
		return nil, fmt.Errorf("query audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var details string
		if err := rows.Scan(&e.At, &e.WorkspaceID, &e.Actor, &e.Action, &e.TargetType, &e.TargetID, &details); err != nil {
			return nil, err
		}
		_ = json.Unmarshal([]byte(details), &e.Details)
		out = append(out, e)
	}
	return out, rows.Err()
}
