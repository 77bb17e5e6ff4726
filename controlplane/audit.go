package controlplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// AuditQuery selects a page of a workspace's audit log. Empty fields select everything.
type AuditQuery struct {
	// Action is an action name or its beginning ("api_key" matches api_key.create and api_key.revoke).
	Action string
	// Actor is one actor exactly, as entries name it ("user:<id>", "key:<id>").
	Actor string
	// From and To bound the time: From included, To excluded; zero is unbounded.
	From, To time.Time
	// Cursor continues after the last entry of the previous page (AuditPage's next cursor).
	Cursor string
	Limit  int
}

// auditEnd bounds an open-ended range: within what a DateTime holds (ClickHouse reads a literal
// of 2106, near the type's end, as 0).
var auditEnd = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// AuditLog returns a workspace's newest entries first.
func (s *Store) AuditLog(ctx context.Context, workspaceID string, limit int) ([]AuditEntry, error) {
	out, _, err := s.AuditPage(ctx, workspaceID, AuditQuery{Limit: limit})
	return out, err
}

// AuditPage returns one page of a workspace's entries, newest first, and the cursor of the next
// page ("" when this page is the last).
func (s *Store) AuditPage(ctx context.Context, workspaceID string, q AuditQuery) ([]AuditEntry, string, error) {
	afterMs, afterID := uint64(math.MaxUint64), ""
	if q.Cursor != "" {
		var err error
		if afterMs, afterID, err = parseAuditCursor(q.Cursor); err != nil {
			return nil, "", err
		}
	}
	from, to := q.From, q.To
	if from.IsZero() {
		from = time.Unix(0, 0) // a DateTime holds nothing earlier
	}
	if to.IsZero() {
		to = auditEnd
	}
	rows, err := s.ch.Query(ctx, selectAudit, workspaceID, q.Action, q.Action, q.Actor, q.Actor,
		strconv.FormatInt(from.Unix(), 10), strconv.FormatInt(to.Unix(), 10), strconv.FormatUint(afterMs, 10), afterID, uint64(q.Limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("query audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	var ms []uint64
	var ids []string
	for rows.Next() {
		var e AuditEntry
		var details, id string
		var atMs uint16
		if err := rows.Scan(&e.At, &atMs, &id, &e.WorkspaceID, &e.Actor, &e.Action, &e.TargetType, &e.TargetID, &details); err != nil {
			return nil, "", err
		}
		_ = json.Unmarshal([]byte(details), &e.Details)
		out = append(out, e)
		ms = append(ms, uint64(e.At.Unix())*1000+uint64(atMs))
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > q.Limit {
		out = out[:q.Limit]
		next = auditCursor(ms[q.Limit-1], ids[q.Limit-1])
	}
	return out, next, nil
}

// The cursor is opaque to clients: base64url of "<milliseconds>.<audit ID>".
func auditCursor(ms uint64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(ms, 10) + "." + id))
}

func parseAuditCursor(c string) (uint64, string, error) {
	bad := fmt.Errorf("%w: cursor: pass the nextCursor of the previous page unchanged", ErrInvalid)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	msStr, id, ok := strings.Cut(string(b), ".")
	ms, err := strconv.ParseUint(msStr, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", bad
	}
	return ms, id, nil
}
