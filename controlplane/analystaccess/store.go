package analystaccess

import (
	"context"
	"fmt"
	"time"
)

// record is a row of analyst_access.
type record struct {
	WorkspaceID    string
	User           string
	PasswordSHA256 string
	CreatedAt      time.Time
	RotatedAt      time.Time
	Revoked        bool
}

func (r record) access(refreshed *time.Time) Access {
	return Access{WorkspaceID: r.WorkspaceID, User: r.User, Database: r.User, CreatedAt: r.CreatedAt, RotatedAt: r.RotatedAt,
		RefreshedAt: refreshed}
}

const selectRecords = `SELECT workspace_id, argMax(clickhouse_user, version), argMax(password_sha256, version),
    argMax(created_at, version), argMax(rotated_at, version), argMax(revoked, version) AS is_revoked
FROM analyst_access %s GROUP BY workspace_id HAVING is_revoked = 0 ORDER BY workspace_id`

func (m *Manager) put(ctx context.Context, r record) error {
	b, err := m.Conn.PrepareBatch(ctx, `INSERT INTO analyst_access (workspace_id, clickhouse_user, password_sha256,
    created_at, rotated_at, version, revoked)`)
	if err != nil {
		return fmt.Errorf("prepare analyst access: %w", err)
	}
	var revoked uint8
	if r.Revoked {
		revoked = 1
	}
	if err := b.Append(r.WorkspaceID, r.User, r.PasswordSHA256, r.CreatedAt, r.RotatedAt, m.version(), revoked); err != nil {
		_ = b.Abort()
		return fmt.Errorf("write analyst access: %w", err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("write analyst access: %w", err)
	}
	return nil
}

func (m *Manager) query(ctx context.Context, where string, args ...any) ([]record, error) {
	rows, err := m.Conn.Query(ctx, fmt.Sprintf(selectRecords, where), args...)
	if err != nil {
		return nil, fmt.Errorf("read analyst access: %w", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		var revoked uint8
		if err := rows.Scan(&r.WorkspaceID, &r.User, &r.PasswordSHA256, &r.CreatedAt, &r.RotatedAt, &revoked); err != nil {
			return nil, err
		}
		r.CreatedAt, r.RotatedAt = r.CreatedAt.UTC(), r.RotatedAt.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// record is the workspace's current access; found is false when it has none (or it was revoked).
func (m *Manager) record(ctx context.Context, workspaceID string) (record, bool, error) {
	rs, err := m.query(ctx, "WHERE workspace_id = ?", workspaceID)
	if err != nil || len(rs) == 0 {
		return record{}, false, err
	}
	return rs[0], true, nil
}

func (m *Manager) records(ctx context.Context) ([]record, error) { return m.query(ctx, "") }

// refreshedAt is the time of the workspace database's copy, nil when there is none yet.
func (m *Manager) refreshedAt(ctx context.Context, db string) (*time.Time, error) {
	var n uint64
	if err := m.Conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name = ?", db, snapshotView).Scan(&n); err != nil {
		return nil, fmt.Errorf("read analyst copy time: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var at time.Time
	if err := m.Conn.QueryRow(ctx, "SELECT refreshed_at FROM "+db+"."+snapshotView).Scan(&at); err != nil {
		return nil, fmt.Errorf("read analyst copy time: %w", err)
	}
	at = at.UTC()
	return &at, nil
}
