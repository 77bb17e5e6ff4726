package controlplane_test

import (
	"errors"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestSessionKeyIDRecheck: what a console session starts and something finishes later (the
// advertising callback) rechecks the person through AuthenticateKeyID: admin scope for an admin or
// owner, read for a member, refused once they are removed or for another workspace.
func TestSessionKeyIDRecheck(t *testing.T) {
	ctx := testenv.Ctx(t)
	s, other := twoInstances(t)
	w, err := s.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := s.CreateWorkspace(ctx, "test", "other", "Other", controlplane.StatusActive)
	u, err := s.CreateUser(ctx, "test", "acme", "a@acme.test", "A", controlplane.RoleAdmin, "a long password here")
	if err != nil {
		t.Fatal(err)
	}
	id := controlplane.SessionKeyID(u.ID, w.ID)
	if p, err := other.AuthenticateKeyID(ctx, id); err != nil || p.Scope != controlplane.ScopeAdmin || p.WorkspaceID != w.ID {
		t.Fatalf("admin: %+v %v", p, err)
	}
	if _, err := s.SetMemberRole(ctx, "test", w.ID, u.ID, controlplane.RoleMember); err != nil {
		t.Fatal(err)
	}
	// The other instance sees the new role at once (the membership cache is written through).
	if p, err := other.AuthenticateKeyID(ctx, id); err != nil || p.Scope != controlplane.ScopeRead {
		t.Fatalf("member: %+v %v", p, err)
	}
	if _, err := other.AuthenticateKeyID(ctx, controlplane.SessionKeyID(u.ID, o.ID)); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Errorf("another workspace: %v", err)
	}
	if _, err := s.CreateUser(ctx, "test", "acme", "b@acme.test", "B", controlplane.RoleOwner, "another long password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveMember(ctx, "test", w.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.AuthenticateKeyID(ctx, id); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Errorf("removed: %v", err)
	}
}
