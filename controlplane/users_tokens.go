package controlplane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Kinds of one-time link.
const (
	TokenInvitation    = "invitation"
	TokenPasswordReset = "password_reset"
)

// ErrTokenInvalid: the link is unknown, expired or already used. One error for the three, so a
// link's state is not told to whoever holds a guess.
var ErrTokenInvalid = errors.New("this link is invalid, expired or already used; ask an owner for a new one")

// Invitation is an invitation as its creator sees it; the token is only in the link.
type Invitation struct {
	ID          string    `json:"id"`
	Email       string    `json:"email"`
	Role        string    `json:"role"`
	ExpiresAt   time.Time `json:"expiresAt"`
	WorkspaceID string    `json:"-"`
}

type userToken struct {
	hash, kind, id, email, workspaceID, role, createdBy string
	createdAt, expiresAt                                time.Time
	usedAt                                              *time.Time
}

func (s *Store) putToken(ctx context.Context, t userToken) error {
	if err := s.insert(ctx, insertUserToken, []any{t.hash, t.kind, t.id, t.email, t.workspaceID, t.role, t.createdBy,
		t.createdAt, t.expiresAt, t.usedAt, s.version()}); err != nil {
		return fmt.Errorf("write one-time link: %w", err)
	}
	return nil
}

func (s *Store) newToken(ctx context.Context, kind, actor, email, workspaceID, role string, ttl time.Duration) (string, userToken, error) {
	plain := newSecret()
	now := s.now().UTC().Truncate(time.Second)
	t := userToken{hash: HashKey(plain), kind: kind, id: uuid.Must(uuid.NewV7()).String(), email: email, workspaceID: workspaceID,
		role: role, createdBy: actor, createdAt: now, expiresAt: now.Add(ttl)}
	return plain, t, s.putToken(ctx, t)
}

// CreateInvitation makes a one-time link that lets email join the workspace with role. The
// returned token is shown once; only its SHA-256 is stored.
func (s *Store) CreateInvitation(ctx context.Context, actor, workspaceID, email, role string, ttl time.Duration) (string, Invitation, error) {
	email = NormalizeEmail(email)
	if err := validEmail(email); err != nil {
		return "", Invitation{}, err
	}
	if err := validRole(role); err != nil {
		return "", Invitation{}, err
	}
	if _, err := s.Workspace(ctx, workspaceID); err != nil {
		return "", Invitation{}, err
	}
	plain, t, err := s.newToken(ctx, TokenInvitation, actor, email, workspaceID, role, ttl)
	if err != nil {
		return "", Invitation{}, err
	}
	inv := Invitation{ID: t.id, Email: email, Role: role, ExpiresAt: t.expiresAt, WorkspaceID: workspaceID}
	return plain, inv, s.Audit(ctx, AuditEntry{WorkspaceID: workspaceID, Actor: actor, Action: "invitation.create", TargetType: "invitation",
		TargetID: t.id, Details: map[string]string{"email": email, "role": role}})
}

// AcceptInvitation consumes an invitation: a new user is created with name and password; a person
// who already has an account proves it with their current password (the link alone must not
// replace anyone's password) and keeps their name. Either way they become a member.
func (s *Store) AcceptInvitation(ctx context.Context, token, name, password string) (User, error) {
	t, err := s.claimToken(ctx, TokenInvitation, token, func(t userToken) error {
		if u, err := s.UserByEmail(ctx, t.email); err == nil && u.HasPassword() {
			return VerifyPassword(u.hash, password)
		}
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("%w: name is required", ErrInvalid)
		}
		return ValidatePassword(password)
	})
	if err != nil {
		return User{}, err
	}
	u, err := s.UserByEmail(ctx, t.email)
	if err != nil || !u.HasPassword() {
		u = User{ID: UserID(t.email), Email: t.email, Name: strings.TrimSpace(name)}
		if u.hash, err = HashPassword(password); err != nil {
			return User{}, err
		}
		if err := s.putUser(ctx, u); err != nil {
			return User{}, err
		}
	}
	w, err := s.Workspace(ctx, t.workspaceID)
	if err != nil {
		return User{}, err
	}
	if _, err := s.PutMember(ctx, "user:"+u.ID, w.Slug, u.Email, t.role); err != nil {
		return User{}, err
	}
	return u, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: "user:" + u.ID, Action: "invitation.accept", TargetType: "invitation",
		TargetID: t.id, Details: map[string]string{"email": u.Email, "role": t.role}})
}

// CreatePasswordReset makes a one-time link that sets a new password for the user with email.
// workspaceID, when not empty, limits it to that workspace's members (an owner resetting a member).
func (s *Store) CreatePasswordReset(ctx context.Context, actor, workspaceID, email string, ttl time.Duration) (string, error) {
	u, err := s.UserByEmail(ctx, email)
	if err != nil {
		return "", err
	}
	if workspaceID != "" {
		ms, err := s.Memberships(ctx, u.ID)
		if err != nil {
			return "", err
		}
		member := false
		for _, m := range ms {
			member = member || m.Workspace.ID == workspaceID
		}
		if !member {
			return "", fmt.Errorf("%w: no member with this e-mail address in this workspace", ErrNotFound)
		}
	}
	plain, t, err := s.newToken(ctx, TokenPasswordReset, actor, u.Email, workspaceID, "", ttl)
	if err != nil {
		return "", err
	}
	return plain, s.AuditUser(ctx, u.ID, AuditEntry{Actor: actor, Action: "password_reset.create", TargetType: "user",
		TargetID: u.ID, Details: map[string]string{"email": u.Email, "linkId": t.id}})
}

// CompletePasswordReset consumes a reset link and sets the password; the caller ends the user's
// sessions.
func (s *Store) CompletePasswordReset(ctx context.Context, token, password string) (User, error) {
	t, err := s.claimToken(ctx, TokenPasswordReset, token, func(userToken) error { return ValidatePassword(password) })
	if err != nil {
		return User{}, err
	}
	u, err := s.UserByEmail(ctx, t.email)
	if err != nil {
		return User{}, ErrTokenInvalid
	}
	return u, s.setPassword(ctx, "user:"+u.ID, u, password, "user.password_reset")
}

// claimToken finds a link of kind, lets check refuse it without using it up (a too-short
// password), and then consumes it: the claim is one Redis SET NX, so of two concurrent uses one
// wins; ClickHouse records the use.
func (s *Store) claimToken(ctx context.Context, kind, token string, check func(userToken) error) (userToken, error) {
	t, err := s.tokenByHash(ctx, HashKey(token))
	if err != nil {
		return userToken{}, err
	}
	now := s.now().UTC()
	if t.kind != kind || t.usedAt != nil || !now.Before(t.expiresAt) {
		return userToken{}, ErrTokenInvalid
	}
	if err := check(t); err != nil {
		return userToken{}, err
	}
	ok, err := s.rdb.SetNX(ctx, s.prefix+"user-token-used:"+t.hash, t.id, t.expiresAt.Sub(now)+time.Hour).Result()
	if err != nil {
		return userToken{}, fmt.Errorf("claim one-time link: %w", err)
	}
	if !ok {
		return userToken{}, ErrTokenInvalid
	}
	at := now.Truncate(time.Second)
	t.usedAt = &at
	return t, s.putToken(ctx, t)
}

func (s *Store) tokenByHash(ctx context.Context, hash string) (userToken, error) {
	rows, err := s.ch.Query(ctx, selectUserToken, hash)
	if err != nil {
		return userToken{}, fmt.Errorf("query one-time link: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return userToken{}, err
		}
		return userToken{}, ErrTokenInvalid
	}
	var t userToken
	if err := rows.Scan(&t.hash, &t.kind, &t.id, &t.email, &t.workspaceID, &t.role, &t.createdBy, &t.createdAt, &t.expiresAt, &t.usedAt); err != nil {
		return userToken{}, err
	}
	return t, nil
}
