package controlplane_test

import (
	"errors"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// A key's ID authenticates as long as the key would: a revocation on one instance is seen by the
// other at once, also after Redis lost its cache.
func TestAuthenticateKeyIDFollowsRevocation(t *testing.T) {
	a, b, flush := twoInstancesWithFlush(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	_, k, err := a.CreateAPIKey(ctx, "cli", "acme", "ops", controlplane.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.AuthenticateKeyID(ctx, k.ID)
	if err != nil || p.KeyID != k.ID || p.WorkspaceID != k.WorkspaceID || p.Scope != controlplane.ScopeAdmin {
		t.Fatalf("live key: %+v %v", p, err)
	}
	for _, id := range []string{"", "no-such-key"} {
		if _, err := b.AuthenticateKeyID(ctx, id); !errors.Is(err, controlplane.ErrInvalidKey) {
			t.Errorf("key ID %q: %v", id, err)
		}
	}
	if _, err := a.RevokeAPIKey(ctx, "cli", k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthenticateKeyID(ctx, k.ID); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("revoked key on the other instance: %v", err)
	}
	flush()
	if _, err := b.AuthenticateKeyID(ctx, k.ID); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("revoked key after Redis lost its cache: %v", err)
	}
}
