package controlplane_test

import (
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestKeyLastUsedIsRecordedOnceAMinute: a key's use is written at most once per KeyUseInterval
// per process, and a late write of an earlier time (another instance's clock) never moves the
// record back.
func TestKeyLastUsedIsRecordedOnceAMinute(t *testing.T) {
	a, b := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	plain, k, err := a.CreateAPIKey(ctx, "cli", "acme", "ops", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		keys, err := a.APIKeys(ctx, k.WorkspaceID)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		return keys[0].LastUsedAt
	}
	if at := lastUsed(); at != nil {
		t.Fatalf("unused key: %v", at)
	}
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	use := func(s *controlplane.Store, at time.Time) {
		t.Helper()
		s.SetClock(func() time.Time { return at })
		if _, err := s.AuthenticateAPIKey(ctx, plain); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		s    *controlplane.Store
		at   time.Time
		want time.Time
	}{
		{a, t0, t0},
		{a, t0.Add(30 * time.Second), t0}, // within the minute: not written
		{a, t0.Add(61 * time.Second), t0.Add(61 * time.Second)},   // a minute on: written
		{b, t0.Add(10 * time.Second), t0.Add(61 * time.Second)},   // an earlier clock: kept later
		{b, t0.Add(125 * time.Second), t0.Add(125 * time.Second)}, // the other instance, later
	} {
		use(step.s, step.at)
		if got := lastUsed(); got == nil || !got.Equal(step.want) {
			t.Fatalf("after a use at %s: lastUsedAt %v, want %s", step.at, got, step.want)
		}
	}
	// An unknown key is not recorded: only keys that passed the check are.
	if _, err := a.AuthenticateAPIKey(ctx, controlplane.APIKeyPrefix+"nope"); err == nil {
		t.Fatal("unknown key authenticated")
	}
}
