package uploader

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// RowsConn is the part of a ClickHouse connection the upload queue needs.
type RowsConn interface {
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

var _ RowsConn = (driver.Conn)(nil)

// rowStore reads and writes upload-queue rows. It is the table's only writer (besides the 180-day
// scrub of the retention job), and every write is a whole new version of a row.
type rowStore struct {
	conn RowsConn
	// hints learn of every row that becomes due (nil: not kept, the rescan finds the rows).
	hints *dueHints
}

// put writes row versions in one insert, then marks their due hints. Callers set Version
// (nextVersion) and UpdatedAt.
func (s rowStore) put(ctx context.Context, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	b, err := s.conn.PrepareBatch(ctx, insertRow)
	if err != nil {
		return fmt.Errorf("prepare upload_queue insert: %w", err)
	}
	for _, r := range rows {
		if err := b.Append(rowValues(r)...); err != nil {
			_ = b.Abort()
			return fmt.Errorf("append upload_queue row %s: %w", r.RowID, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("insert upload_queue: %w", err)
	}
	s.hints.mark(ctx, rows)
	return nil
}

func rowValues(r Row) []any {
	codes := r.ReasonCodes
	if codes == nil {
		codes = []string{}
	}
	var next *time.Time
	if r.NextAttemptAt != nil {
		t := r.NextAttemptAt.UTC()
		next = &t
	}
	return []any{r.RowID, r.WorkspaceID, r.MappingID, r.SourceID, r.EventIDHash, r.TransactionID, r.Milestone,
		r.AcquisitionID, r.ClickIDType, r.ClickID, r.EventTime.UTC(), r.ValueCents, r.Currency, string(r.Status),
		boolByte(r.ValidationOnly), r.Attempts, next, r.RequestID, codes, r.Message, r.CreatedAt.UTC(), r.UpdatedAt.UTC(),
		r.Version, r.PollAttempts, r.DiagnosticsStatus, r.ConversionCustomerID, r.LoginCustomerID, r.ConversionActionID,
		r.RequestEvents}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// existing returns which of ids already have a row in workspaceID.
func (s rowStore) existing(ctx context.Context, workspaceID string, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return map[string]bool{}, nil
	}
	rows, err := s.conn.Query(ctx, selectExistingRows, workspaceID, idSet(ids))
	if err != nil {
		return nil, fmt.Errorf("read existing upload rows: %w", err)
	}
	defer rows.Close()
	out := make(map[string]bool, len(ids))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// query runs a selectLatestRows query and scans its rows.
func (s rowStore) query(ctx context.Context, q string, args ...any) ([]Row, error) {
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read upload rows: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var (
			r                  Row
			status             string
			validation         uint8
			next               time.Time
			eventTime, created time.Time
		)
		if err := rows.Scan(&r.RowID, &r.WorkspaceID, &r.MappingID, &r.SourceID, &r.EventIDHash, &r.TransactionID,
			&r.Milestone, &r.AcquisitionID, &r.ClickIDType, &r.ClickID, &eventTime, &r.ValueCents, &r.Currency, &status,
			&validation, &r.Attempts, &next, &r.RequestID, &r.ReasonCodes, &r.Message, &created, &r.UpdatedAt,
			&r.Version, &r.PollAttempts, &r.DiagnosticsStatus, &r.ConversionCustomerID, &r.LoginCustomerID,
			&r.ConversionActionID, &r.RequestEvents); err != nil {
			return nil, fmt.Errorf("scan upload row: %w", err)
		}
		r.Status = Status(status)
		r.ValidationOnly = validation == 1
		r.EventTime, r.CreatedAt, r.UpdatedAt = eventTime.UTC(), created.UTC(), r.UpdatedAt.UTC()
		if next.Unix() > 0 {
			n := next.UTC()
			r.NextAttemptAt = &n
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// get returns the latest version of one row, ok false when there is none.
func (s rowStore) get(ctx context.Context, workspaceID, rowID string) (Row, bool, error) {
	rs, err := s.query(ctx, selectRow, workspaceID, rowID)
	if err != nil || len(rs) == 0 {
		return Row{}, false, err
	}
	return rs[0], true, nil
}

// idSet binds IDs as a set literal for `IN (?)` (see selectExistingRows).
func idSet(ids []string) []clickhouse.GroupSet {
	set := make([]clickhouse.GroupSet, len(ids))
	for i, id := range ids {
		set[i] = clickhouse.GroupSet{Value: []any{id}}
	}
	return set
}

// schedule runs one of the select*Schedule queries: each workspace's earliest l_next.
func (s rowStore) schedule(ctx context.Context, q string, args ...any) (map[string]time.Time, error) {
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read upload schedule: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			ws string
			at time.Time
		)
		if err := rows.Scan(&ws, &at); err != nil {
			return nil, err
		}
		out[ws] = at.UTC()
	}
	return out, rows.Err()
}

// due returns the rows of workspaceID to send at now, at most perMapping per mapping.
func (s rowStore) due(ctx context.Context, workspaceID string, now time.Time, perMapping int) ([]Row, error) {
	return s.query(ctx, selectDueRows, workspaceID, now.UTC(), now.UTC(), perMapping)
}

// pollDue returns up to limit rows of workspaceID whose diagnostics are due at now.
func (s rowStore) pollDue(ctx context.Context, workspaceID string, now time.Time, limit int) ([]Row, error) {
	return s.query(ctx, selectPollRows, workspaceID, now.UTC(), limit)
}

// pollPending returns up to limit rows of workspaceID still waiting for diagnostics, whenever
// their next poll is due.
func (s rowStore) pollPending(ctx context.Context, workspaceID string, limit int) ([]Row, error) {
	return s.query(ctx, selectPollPendingRows, workspaceID, limit)
}

// change is a row's new version with the state it left (statusNew for a created row).
type change struct {
	from Status
	row  Row
}

// advance returns the next version of r at now; the caller sets the new state on it.
func advance(r Row, now time.Time) Row {
	r.Version = nextVersion(r.Version, now)
	r.UpdatedAt = now.UTC()
	return r
}

// apply writes the changes in one insert and counts the transitions once ClickHouse accepted them.
func (s rowStore) apply(ctx context.Context, m *Metrics, changes []change) error {
	rows := make([]Row, len(changes))
	for i, c := range changes {
		rows[i] = c.row
	}
	if err := s.put(ctx, rows); err != nil {
		return err
	}
	for _, c := range changes {
		m.transition(c.from, c.row.Status)
	}
	return nil
}
