package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// User is a person who signs in to the console. The password hash never leaves the store.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"-"`
	hash      string
}

// HasPassword reports whether the user can sign in (an invited user has none until accepting).
func (u User) HasPassword() bool { return u.hash != "" }

// Membership is one of a user's workspaces with the user's role there.
type Membership struct {
	Workspace Workspace
	Role      string
}

// MemberInfo is a member as the console lists them.
type MemberInfo struct {
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

// NormalizeEmail is the one form of an address that IDs and lookups use.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// UserID is the ID of the person with this address: the name-based UUID PutMember has always
// given members, so memberships stored before users existed belong to the same person.
func UserID(email string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("mailto:"+NormalizeEmail(email))).String()
}

func validEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return fmt.Errorf("%w: email %q is not an e-mail address", ErrInvalid, email)
	}
	return nil
}

func validRole(role string) error {
	if !slices.Contains([]string{RoleOwner, RoleAdmin, RoleMember}, role) {
		return fmt.Errorf("%w: role %q: want owner, admin or member", ErrInvalid, role)
	}
	return nil
}

// UserByID returns a user; ErrNotFound when there is none.
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	rows, err := s.ch.Query(ctx, selectUser, id)
	if err != nil {
		return User{}, fmt.Errorf("query user: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return User{}, err
		}
		return User{}, fmt.Errorf("%w: user", ErrNotFound)
	}
	var u User
	var del uint8
	if err := rows.Scan(&u.ID, &u.Email, &u.Name, &u.hash, &u.CreatedAt, &del); err != nil {
		return User{}, err
	}
	return u, nil
}

// UserByEmail returns the user with this address; ErrNotFound when there is none.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	return s.UserByID(ctx, UserID(email))
}

func (s *Store) putUser(ctx context.Context, u User) error {
	now := s.now().UTC().Truncate(time.Second)
	if u.CreatedAt.IsZero() {
		u.CreatedAt = now
	}
	if err := s.insert(ctx, insertUser, []any{u.ID, u.Email, u.Name, u.hash, u.CreatedAt, now, s.version(), uint8(0)}); err != nil {
		return fmt.Errorf("write user: %w", err)
	}
	return s.publishUser(ctx, u)
}

// CreateUser adds a user with a password and makes them a member of a workspace with role (the
// CLI's `admin user create`, and the demo seeding). An existing user keeps their name and gets
// the new password and membership.
func (s *Store) CreateUser(ctx context.Context, actor, slug, email, name, role, password string) (User, error) {
	email = NormalizeEmail(email)
	if err := validEmail(email); err != nil {
		return User{}, err
	}
	if err := validRole(role); err != nil {
		return User{}, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return User{}, err
	}
	w, err := s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return User{}, err
	}
	u, err := s.UserByEmail(ctx, email)
	if err != nil {
		u = User{ID: UserID(email), Email: email, Name: strings.TrimSpace(name)}
	}
	u.hash = hash
	if err := s.putUser(ctx, u); err != nil {
		return User{}, err
	}
	if _, err := s.PutMember(ctx, actor, w.Slug, email, role); err != nil {
		return User{}, err
	}
	return u, s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "user.create", TargetType: "user",
		TargetID: u.ID, Details: map[string]string{"email": email, "role": role}})
}

// Authenticate checks an e-mail address and password. Every failure is ErrWrongPassword, and an
// unknown address costs the same hash as a wrong password, so neither the answer nor its timing
// tells which it was.
func (s *Store) AuthenticateUser(ctx context.Context, email, password string) (User, error) {
	u, err := s.UserByEmail(ctx, email)
	if err != nil {
		if !isNotFound(err) {
			return User{}, err
		}
		BurnPasswordCheck(password)
		return User{}, ErrWrongPassword
	}
	if err := VerifyPassword(u.hash, password); err != nil {
		return User{}, err
	}
	return u, nil
}

// ChangePassword replaces the password after checking the current one.
func (s *Store) ChangePassword(ctx context.Context, userID, current, next string) error {
	u, err := s.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	if err := VerifyPassword(u.hash, current); err != nil {
		return err
	}
	return s.setPassword(ctx, "user:"+u.ID, u, next, "user.password_change")
}

func (s *Store) setPassword(ctx context.Context, actor string, u User, password, action string) error {
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	u.hash = hash
	if err := s.putUser(ctx, u); err != nil {
		return err
	}
	return s.AuditUser(ctx, u.ID, AuditEntry{Actor: actor, Action: action, TargetType: "user", TargetID: u.ID,
		Details: map[string]string{"email": u.Email}})
}

// SetUserName changes a user's display name.
func (s *Store) SetUserName(ctx context.Context, userID, name string) (User, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return User{}, fmt.Errorf("%w: name must be 1 to 200 characters", ErrInvalid)
	}
	u, err := s.UserByID(ctx, userID)
	if err != nil {
		return User{}, err
	}
	u.Name = name
	return u, s.putUser(ctx, u)
}

// Memberships are a user's workspaces and roles, ordered by workspace slug.
func (s *Store) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	ms, err := s.cachedMemberships(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Membership, 0, len(ms))
	for _, m := range ms {
		w, err := s.Workspace(ctx, m.WorkspaceID)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Membership{Workspace: w, Role: m.Role})
	}
	slices.SortFunc(out, func(a, b Membership) int { return strings.Compare(a.Workspace.Slug, b.Workspace.Slug) })
	return out, nil
}

// MemberList lists a workspace's members with their names.
func (s *Store) MemberList(ctx context.Context, workspaceID string) ([]MemberInfo, error) {
	rows, err := s.ch.Query(ctx, selectMemberList, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("query members: %w", err)
	}
	defer rows.Close()
	out := []MemberInfo{}
	for rows.Next() {
		var m MemberInfo
		if err := rows.Scan(&m.UserID, &m.Email, &m.Role, &m.CreatedAt, &m.Name); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SetMemberRole changes a member's role; the last owner cannot stop being one.
func (s *Store) SetMemberRole(ctx context.Context, actor, workspaceID, userID, role string) (MemberInfo, error) {
	if err := validRole(role); err != nil {
		return MemberInfo{}, err
	}
	m, others, err := s.memberAndOwners(ctx, workspaceID, userID)
	if err != nil {
		return MemberInfo{}, err
	}
	if m.Role == RoleOwner && role != RoleOwner && others == 0 {
		return MemberInfo{}, fmt.Errorf("%w: the workspace's last owner cannot stop being an owner; make another member owner first", ErrConflict)
	}
	old := m.Role
	m.Role = role
	if err := s.writeMember(ctx, workspaceID, m, 0); err != nil {
		return MemberInfo{}, err
	}
	return m, s.Audit(ctx, AuditEntry{WorkspaceID: workspaceID, Actor: actor, Action: "member.role_change", TargetType: "member",
		TargetID: userID, Details: map[string]string{"email": m.Email, "from": old, "to": role}})
}

// RemoveMember takes a member out of a workspace; the last owner cannot be removed.
func (s *Store) RemoveMember(ctx context.Context, actor, workspaceID, userID string) (MemberInfo, error) {
	m, others, err := s.memberAndOwners(ctx, workspaceID, userID)
	if err != nil {
		return MemberInfo{}, err
	}
	if m.Role == RoleOwner && others == 0 {
		return MemberInfo{}, fmt.Errorf("%w: the workspace's last owner cannot be removed; make another member owner first", ErrConflict)
	}
	if err := s.writeMember(ctx, workspaceID, m, 1); err != nil {
		return MemberInfo{}, err
	}
	return m, s.Audit(ctx, AuditEntry{WorkspaceID: workspaceID, Actor: actor, Action: "member.remove", TargetType: "member",
		TargetID: userID, Details: map[string]string{"email": m.Email, "role": m.Role}})
}

// memberAndOwners finds a member and counts the workspace's other owners.
func (s *Store) memberAndOwners(ctx context.Context, workspaceID, userID string) (MemberInfo, int, error) {
	all, err := s.MemberList(ctx, workspaceID)
	if err != nil {
		return MemberInfo{}, 0, err
	}
	i := slices.IndexFunc(all, func(m MemberInfo) bool { return m.UserID == userID })
	if i < 0 {
		return MemberInfo{}, 0, fmt.Errorf("%w: no member %s in this workspace", ErrNotFound, userID)
	}
	others := 0
	for j, m := range all {
		if j != i && m.Role == RoleOwner {
			others++
		}
	}
	return all[i], others, nil
}

func (s *Store) writeMember(ctx context.Context, workspaceID string, m MemberInfo, deleted uint8) error {
	now := s.now().UTC().Truncate(time.Second)
	if err := s.insert(ctx, insertMember, []any{workspaceID, m.UserID, m.Email, m.Role, m.CreatedAt, now, s.version(), deleted}); err != nil {
		return fmt.Errorf("write member: %w", err)
	}
	return s.publishMemberships(ctx, m.UserID)
}

// AuditUser records a change to a person, not to one workspace (sign-in, password, sessions) in
// the audit log of each workspace they belong to, where that workspace's owners read it; a person
// of no workspace is recorded under the empty workspace ID.
func (s *Store) AuditUser(ctx context.Context, userID string, e AuditEntry) error {
	ms, err := s.cachedMemberships(ctx, userID)
	if err != nil {
		return err
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.WorkspaceID)
	}
	if len(ids) == 0 {
		ids = []string{""}
	}
	for _, id := range ids {
		e.WorkspaceID = id
		if err := s.Audit(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// SessionKeyID stands for a console session where the API needs a key ID: the reporting budget is
// charged to it, and an operation the session starts and something else finishes later (the
// advertising OAuth callback) rechecks it with AuthenticateKeyID.
func SessionKeyID(userID, workspaceID string) string { return "user:" + userID + "@" + workspaceID }

// sessionPrincipal rechecks a SessionKeyID: the person is still a member of the workspace, with
// the admin scope when their role is admin or owner. ok is false for a key's ID.
func (s *Store) sessionPrincipal(ctx context.Context, keyID string) (p Principal, ok bool, err error) {
	rest, isUser := strings.CutPrefix(keyID, "user:")
	if !isUser {
		return Principal{}, false, nil
	}
	userID, workspaceID, _ := strings.Cut(rest, "@")
	ms, err := s.cachedMemberships(ctx, userID)
	if err != nil {
		return Principal{}, true, err
	}
	for _, m := range ms {
		if m.WorkspaceID == workspaceID && workspaceID != "" {
			scope := ScopeRead
			if m.Role == RoleAdmin || m.Role == RoleOwner {
				scope = ScopeAdmin
			}
			return Principal{WorkspaceID: workspaceID, KeyID: keyID, Scope: scope}, true, nil
		}
	}
	return Principal{}, true, ErrInvalidKey
}
