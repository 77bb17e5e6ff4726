package controlplane_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

func withSelectedApp(t *testing.T, s *controlplane.Store) {
	t.Helper()
	ctx := testenv.Ctx(t)
	if _, err := s.CreateWorkspace(ctx, "cli", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"app-1", "app-2"} {
		if err := s.PutApp(ctx, "cli", controlplane.App{ID: id, Name: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetSelectedApps(ctx, "cli", "acme", []string{"app-1"}); err != nil {
		t.Fatal(err)
	}
}

func TestCreateSourceValidates(t *testing.T) {
	a, _ := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	if _, _, err := a.CreateSource(ctx, "cli", "acme", "app-2", "", []string{"https://app.example"}); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("unselected app: %v", err)
	}
	if _, _, err := a.CreateSource(ctx, "cli", "acme", "app-1", "", []string{"http://app.example"}); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("plain http origin: %v", err)
	}
	src, sk, err := a.CreateSource(ctx, "cli", "acme", "app-1", "Site", []string{"https://App.example:443", "http://localhost:3000", "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(src.PublicKey, controlplane.PublicKeyPrefix) || !strings.HasPrefix(sk, controlplane.PrivateKeyPrefix) {
		t.Fatalf("key prefixes: %s %s", src.PublicKey[:11], sk[:11])
	}
	if strings.Join(src.AllowedOrigins, " ") != "https://app.example http://localhost:3000" || !src.Enabled {
		t.Fatalf("source %+v", src)
	}
	if !src.AllowsOrigin("https://app.example") || src.AllowsOrigin("https://app.example:8443") || src.AllowsOrigin("https://evil.example") {
		t.Fatal("origin matching is not exact")
	}
	assertNoPlaintext(t, a, sk)
}

func TestSourceKeyRotationAndDisableAreImmediate(t *testing.T) {
	a, b, flush := twoInstancesWithFlush(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	src, sk, err := a.CreateSource(ctx, "cli", "acme", "app-1", "Site", []string{"https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	// b resolves both keys and caches them.
	if _, _, err := b.AuthenticateServerKey(ctx, sk, src.PublicKey, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.AuthenticateServerKey(ctx, sk, src.PublicKey, "other-team"); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("wrong team: %v", err)
	}
	if p, err := b.AuthenticatePrivateKey(ctx, sk); err != nil || p.SourceID != src.ID {
		t.Fatalf("private key as reader: %+v %v", p, err)
	}

	rotated, err := a.RotatePublicKey(ctx, "cli", src.WorkspaceID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.SourceByPublicKey(ctx, src.PublicKey); !errors.Is(err, controlplane.ErrSourceUnavailable) {
		t.Fatalf("old public key after rotation: %v", err)
	}
	if got, err := b.SourceByPublicKey(ctx, rotated.PublicKey); err != nil || got.ID != src.ID {
		t.Fatalf("new public key: %v", err)
	}

	_, sk2, err := a.RotatePrivateKey(ctx, "cli", src.WorkspaceID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.AuthenticateServerKey(ctx, sk, rotated.PublicKey, "acme"); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("old private key after rotation: %v", err)
	}
	if _, err := b.AuthenticatePrivateKey(ctx, sk); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("old private key as reader: %v", err)
	}
	if _, _, err := b.AuthenticateServerKey(ctx, sk2, rotated.PublicKey, "acme"); err != nil {
		t.Fatalf("new private key: %v", err)
	}

	if _, err := a.SetSourceEnabled(ctx, "cli", src.WorkspaceID, src.ID, false); err != nil {
		t.Fatal(err)
	}
	if got, err := b.SourceByPublicKey(ctx, rotated.PublicKey); err != nil || got.Enabled {
		t.Fatalf("disable not seen: %+v %v", got, err)
	}

	// With the cache gone, ClickHouse alone gives the same answers.
	flush()
	if _, err := b.SourceByPublicKey(ctx, src.PublicKey); !errors.Is(err, controlplane.ErrSourceUnavailable) {
		t.Fatalf("old public key, cold cache: %v", err)
	}
	if _, err := b.AuthenticatePrivateKey(ctx, sk); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("old private key, cold cache: %v", err)
	}
	if got, err := b.SourceByPublicKey(ctx, rotated.PublicKey); err != nil || got.Enabled {
		t.Fatalf("cold cache: %+v %v", got, err)
	}

	log, err := a.AuditLog(ctx, src.WorkspaceID, 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range log {
		seen[e.Action] = true
	}
	for _, want := range []string{"tracking_source.create", "tracking_source.rotate_public_key", "tracking_source.rotate_private_key", "tracking_source.disable"} {
		if !seen[want] {
			t.Errorf("audit log lacks %s", want)
		}
	}
	assertNoPlaintext(t, a, sk, sk2)
}

// A disabled source's private key reads nothing, on an instance that had cached it and with a cold
// cache; enabling the source again restores it.
func TestDisabledSourcePrivateKeyIsRefusedAtOnce(t *testing.T) {
	a, b, flush := twoInstancesWithFlush(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	src, sk, err := a.CreateSource(ctx, "cli", "acme", "app-1", "Site", []string{"https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthenticatePrivateKey(ctx, sk); err != nil {
		t.Fatalf("enabled source: %v", err)
	}
	if _, err := a.SetSourceEnabled(ctx, "cli", src.WorkspaceID, src.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthenticatePrivateKey(ctx, sk); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("disabled source, warm cache: %v", err)
	}
	flush()
	if _, err := b.AuthenticatePrivateKey(ctx, sk); !errors.Is(err, controlplane.ErrInvalidKey) {
		t.Fatalf("disabled source, cold cache: %v", err)
	}
	if _, err := a.SetSourceEnabled(ctx, "cli", src.WorkspaceID, src.ID, true); err != nil {
		t.Fatal(err)
	}
	if p, err := b.AuthenticatePrivateKey(ctx, sk); err != nil || p.SourceID != src.ID {
		t.Fatalf("enabled again: %+v %v", p, err)
	}
}
