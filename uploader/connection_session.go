package uploader

import (
	"context"
	"errors"
	"fmt"

	"github.com/revtrack/revtrack/controlplane"
)

// ConnectWithSession starts a connection for a person signed in to the console (no key): the same
// browser flow as ConnectWithKey, with the person's user ID standing for the key. The callback (and
// the confirmation of a replacement) checks that they are still an owner or admin of the workspace
// and that its subscription is still active, as it checks a key's scope.
func (s *Setup) ConnectWithSession(ctx context.Context, actor, userID, workspaceID string) (BrowserStart, error) {
	if userID == "" {
		return BrowserStart{}, errors.New("ads connect: the starting user's ID is required")
	}
	return s.connectBrowser(ctx, pendingConnect{WorkspaceID: workspaceID, Actor: actor, Origin: originAPI, UserID: userID})
}

// revalidateUser is revalidate for a flow a signed-in person started: still a member of the
// workspace with the owner or admin role (a role change or removal since refuses the flow), and the
// workspace's subscription active.
func (s *Setup) revalidateUser(ctx context.Context, userID, workspaceID string) error {
	ms, err := s.store.Memberships(ctx, userID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Workspace.ID != workspaceID {
			continue
		}
		if m.Role != controlplane.RoleOwner && m.Role != controlplane.RoleAdmin {
			return &ForbiddenError{Reason: "the person who started this connection is no longer an owner or admin of the workspace: nothing was stored"}
		}
		if !m.Workspace.HasAccess() {
			return fmt.Errorf("%w: nothing was stored", controlplane.ErrInactiveSubs)
		}
		return nil
	}
	return &ForbiddenError{Reason: "the person who started this connection is no longer a member of the workspace: nothing was stored"}
}
