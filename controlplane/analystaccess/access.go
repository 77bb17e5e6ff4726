// Package analystaccess gives one workspace's analysts SQL access to their own data and nothing
// else: a ClickHouse user per workspace that reads only a database of its own, which holds a copy
// of the workspace's rows of the tables behind the analyst_* views and those views over the copy.
//
// Why a copy, not a filter: ClickHouse 18.16 has no row policies (users.xml row filters came
// later), and its views read their tables with the caller's rights, so a view that filters on
// workspace_id is only usable by a user who can read the unfiltered tables too. A Distributed table
// that reads as a privileged user is no way out either: the IN subqueries of a query over it run on
// the remote side with that user's rights. A database of copies is closed by construction: the user
// may read that database (and `system`) only, and the copy holds nothing of another workspace.
// The price is freshness: the copy is as of its last refresh (docs/ANALYSTS.md).
//
// The password is shown once, at a grant or rotation, and stored nowhere in clear: its SHA-256 goes
// into the users.d file ClickHouse reads and into the analyst_access table.
package analystaccess

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/schemas"
)

// ErrNotConfigured is returned when the deployment gives no users.d directory to write users into.
var ErrNotConfigured = errors.New("per-workspace analyst access is not configured on this deployment " +
	"(the operator sets --clickhouse-users-dir, the ClickHouse server's users.d directory)")

// Access describes a workspace's analyst access; never the password.
type Access struct {
	WorkspaceID string `json:"workspaceId"`
	// User is the ClickHouse user, and Database the database it reads (the same name).
	User      string    `json:"user"`
	Database  string    `json:"database"`
	CreatedAt time.Time `json:"createdAt"`
	RotatedAt time.Time `json:"rotatedAt"`
	// RefreshedAt is when the copy was last taken; nil before the first refresh completed.
	RefreshedAt *time.Time `json:"refreshedAt"`
}

// Grant is an Access with the password, which exists only in this value.
type Grant struct {
	Access
	Password string `json:"password"`
	// Created is false for a rotation.
	Created bool `json:"-"`
}

// Auditor records a change (*controlplane.Store).
type Auditor interface {
	Audit(ctx context.Context, e controlplane.AuditEntry) error
}

// Manager grants, refreshes, rotates and revokes per-workspace analyst access.
type Manager struct {
	// Conn is the service's connection to its database (ClickHouse.Database); it creates the
	// workspace databases, so its user must be allowed DDL.
	Conn       driver.Conn
	ClickHouse clickhousex.Config
	// Locker serialises the changes of one workspace's access across processes.
	Locker schemas.Locker
	Audit  Auditor
	Log    *slog.Logger
	// LoginWait bounds how long a grant waits for ClickHouse to load the new user (it re-reads
	// users.d every few seconds); 0 means 20 s. A grant still succeeds after it: the file is written.
	LoginWait time.Duration

	now func() time.Time
	mu  sync.Mutex
	ver uint64
}

// UserName is the ClickHouse user (and database) of a workspace's analysts in database: opaque, so
// that the list of databases every user can see in system.tables names no workspace.
func UserName(database, workspaceID string) string {
	sum := sha256.Sum256([]byte(workspaceID))
	return database + "_analyst_" + hex.EncodeToString(sum[:8])
}

var workspaceIDRe = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func (m *Manager) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// version is a strictly increasing row version (wall-clock microseconds), as controlplane's.
func (m *Manager) version() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := uint64(m.clock().UnixMicro())
	if v <= m.ver {
		v = m.ver + 1
	}
	m.ver = v
	return v
}

func (m *Manager) configured() error {
	if m.ClickHouse.UsersDir == "" {
		return ErrNotConfigured
	}
	return nil
}

// lock holds the workspace's access lock while f runs. Refreshes take minutes on a big workspace.
func (m *Manager) lock(ctx context.Context, workspaceID string, f func() error) error {
	unlock, err := m.Locker.Lock(ctx, "analyst-access:"+m.ClickHouse.Database+":"+workspaceID, 30*time.Minute)
	if err != nil {
		return err
	}
	defer func() { _ = unlock(context.WithoutCancel(ctx)) }()
	return f()
}

// Grant creates the workspace's analyst access, or rotates its password when it exists: the copy is
// refreshed, then the user file written with a new password, which the returned Grant carries.
// The previous password stops working when ClickHouse reloads the file (within seconds).
func (m *Manager) Grant(ctx context.Context, actor, workspaceID string) (Grant, error) {
	if err := m.configured(); err != nil {
		return Grant{}, err
	}
	if !workspaceIDRe.MatchString(workspaceID) {
		return Grant{}, fmt.Errorf("%w: workspace ID %q", controlplane.ErrInvalid, workspaceID)
	}
	var g Grant
	err := m.lock(ctx, workspaceID, func() error {
		prev, found, err := m.record(ctx, workspaceID)
		if err != nil {
			return err
		}
		now := m.clock().UTC().Truncate(time.Second)
		r := record{WorkspaceID: workspaceID, User: UserName(m.ClickHouse.Database, workspaceID), CreatedAt: now, RotatedAt: now}
		if found {
			r.CreatedAt = prev.CreatedAt
		}
		refreshed, err := m.refresh(ctx, workspaceID, r.User)
		if err != nil {
			return err
		}
		password, err := newPassword()
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(password))
		r.PasswordSHA256 = hex.EncodeToString(sum[:])
		if err := m.put(ctx, r); err != nil {
			return err
		}
		if err := writeUserFile(m.ClickHouse.UsersDir, r); err != nil {
			return err
		}
		action := "analyst_access.create"
		if found {
			action = "analyst_access.rotate"
		}
		if err := m.audit(ctx, actor, action, r); err != nil {
			return err
		}
		m.waitLogin(ctx, r.User, password)
		g = Grant{Access: r.access(&refreshed), Password: password, Created: !found}
		return nil
	})
	return g, err
}

// Refresh takes a new copy of the workspace's rows and writes its user file again (a file lost with
// a rebuilt server comes back); the password stays.
func (m *Manager) Refresh(ctx context.Context, workspaceID string) (Access, error) {
	if err := m.configured(); err != nil {
		return Access{}, err
	}
	var a Access
	err := m.lock(ctx, workspaceID, func() error {
		r, found, err := m.record(ctx, workspaceID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: the workspace has no analyst access", controlplane.ErrNotFound)
		}
		refreshed, err := m.refresh(ctx, workspaceID, r.User)
		if err != nil {
			return err
		}
		if err := writeUserFile(m.ClickHouse.UsersDir, r); err != nil {
			return err
		}
		a = r.access(&refreshed)
		return nil
	})
	return a, err
}

// RefreshAll refreshes every workspace that has analyst access, and goes on past a failure; it
// returns how many it refreshed and the failures joined.
func (m *Manager) RefreshAll(ctx context.Context) (int, error) {
	if err := m.configured(); err != nil {
		return 0, err
	}
	rs, err := m.records(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, r := range rs {
		if _, err := m.Refresh(ctx, r.WorkspaceID); err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: %w", r.WorkspaceID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Revoke ends the workspace's analyst access: the user file goes first (ClickHouse drops the user
// at its next reload), then the database with the copy.
func (m *Manager) Revoke(ctx context.Context, actor, workspaceID string) error {
	if err := m.configured(); err != nil {
		return err
	}
	return m.lock(ctx, workspaceID, func() error {
		r, found, err := m.record(ctx, workspaceID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: the workspace has no analyst access", controlplane.ErrNotFound)
		}
		if err := removeUserFile(m.ClickHouse.UsersDir, r.User); err != nil {
			return err
		}
		if err := m.dropDatabase(ctx, r.User); err != nil {
			return fmt.Errorf("drop analyst database: %w", err)
		}
		r.Revoked = true
		if err := m.put(ctx, r); err != nil {
			return err
		}
		return m.audit(ctx, actor, "analyst_access.revoke", r)
	})
}

// Get describes the workspace's analyst access.
func (m *Manager) Get(ctx context.Context, workspaceID string) (Access, error) {
	if err := m.configured(); err != nil {
		return Access{}, err
	}
	r, found, err := m.record(ctx, workspaceID)
	if err != nil {
		return Access{}, err
	}
	if !found {
		return Access{}, fmt.Errorf("%w: the workspace has no analyst access", controlplane.ErrNotFound)
	}
	refreshed, err := m.refreshedAt(ctx, r.User)
	if err != nil {
		return Access{}, err
	}
	return r.access(refreshed), nil
}

// List describes every workspace's analyst access.
func (m *Manager) List(ctx context.Context) ([]Access, error) {
	if err := m.configured(); err != nil {
		return nil, err
	}
	rs, err := m.records(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Access, 0, len(rs))
	for _, r := range rs {
		refreshed, err := m.refreshedAt(ctx, r.User)
		if err != nil {
			return nil, err
		}
		out = append(out, r.access(refreshed))
	}
	return out, nil
}

func (m *Manager) audit(ctx context.Context, actor, action string, r record) error {
	if m.Audit == nil {
		return nil
	}
	return m.Audit.Audit(context.WithoutCancel(ctx), controlplane.AuditEntry{WorkspaceID: r.WorkspaceID, Actor: actor,
		Action: action, TargetType: "analyst_access", TargetID: r.User, Details: map[string]string{"user": r.User}})
}

// newPassword is 128 random bits in hex: nothing to escape in a connection string or a shell.
func newPassword() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// waitLogin waits until ClickHouse accepts the new password, so that the caller can use it at once.
// Not an error when it does not: the server may be another node than the one sharing users.d.
func (m *Manager) waitLogin(ctx context.Context, user, password string) {
	wait := m.LoginWait
	if wait <= 0 {
		wait = 20 * time.Second
	}
	c := m.ClickHouse
	c.Username, c.Password, c.Database, c.MaxOpenConns = user, password, user, 1
	deadline := time.Now().Add(wait)
	for {
		conn, err := clickhousex.Open(ctx, c)
		if err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if m.Log != nil {
				m.Log.Warn("the analyst user is written but ClickHouse did not accept it yet; it reloads users.d within seconds",
					"user", user, "err", err)
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}
