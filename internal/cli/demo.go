package cli

import (
	"context"
	"errors"
	"time"

	"github.com/revtrack/revtrack/internal/controlplane"
)

const demoSlug = "demo"

var demoApps = []controlplane.App{
	{ID: "demo-upsell", PlatformAppID: "gid://partners/App/1001", Name: "Upsell Wizard"},
	{ID: "demo-reviews", PlatformAppID: "gid://partners/App/1002", Name: "Review Stars"},
}

// seedDemo makes sure the demo workspace, its apps and its owner exist, and returns a new key.
// Each run creates a new, separately revocable key, because keys are shown only once.
func seedDemo(ctx context.Context, s *controlplane.Store) (string, error) {
	apps, err := s.Apps(ctx)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, a := range apps {
		have[a.ID] = true
	}
	var ids []string
	for _, a := range demoApps {
		ids = append(ids, a.ID)
		if !have[a.ID] {
			if err := s.PutApp(ctx, adminActor, a); err != nil {
				return "", err
			}
		}
	}
	if _, err := s.WorkspaceBySlug(ctx, demoSlug); errors.Is(err, controlplane.ErrNotFound) {
		if _, err := s.CreateWorkspace(ctx, adminActor, demoSlug, "Demo Apps Inc.", controlplane.StatusActive); err != nil {
			return "", err
		}
		if _, err := s.SetSelectedApps(ctx, adminActor, demoSlug, ids); err != nil {
			return "", err
		}
		if _, err := s.PutMember(ctx, adminActor, demoSlug, "owner@demo.example", controlplane.RoleOwner); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	key, _, err := s.CreateAPIKey(ctx, adminActor, demoSlug, "make run "+time.Now().UTC().Format(time.RFC3339), controlplane.ScopeAdmin)
	return key, err
}
