package uploader

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/revtrack/revtrack/controlplane"
)

// disconnectedReason is the disabled reason of the mappings a disconnection disables.
const disconnectedReason = "advertising connection disconnected"

// Disconnect revokes the workspace's credential at Google. When Google confirms, the connection
// becomes disconnected, every stored copy of the token is deleted (and the deletion waited for) and
// the enabled mappings are disabled; mappings and queue rows are kept for audit. When Google does
// not confirm, nothing else changes: the connection stays connected with its credential, the
// failure is recorded as its last error and returned (matching ErrRevocationUnconfirmed), and the
// disconnection may be retried. When the deletion has not finished in time the error matches
// controlplane.ErrEraseUnconfirmed; disconnecting again then waits for it again.
func (s *Setup) Disconnect(ctx context.Context, actor, workspaceID string) (controlplane.AdConnection, error) {
	unlock, err := s.lock(ctx, workspaceID)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	defer unlock()
	c, ok, err := s.conns.Get(ctx, workspaceID)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	if ok && !c.Connected() {
		// An earlier disconnection whose deletion of the token had not finished: confirm it.
		c, erased, err := s.conns.FinishErase(ctx, workspaceID)
		if err != nil {
			return controlplane.AdConnection{}, fmt.Errorf("the connection is disconnected, but %w", err)
		}
		if erased {
			s.log.Info("ads credential erase confirmed", "workspace", workspaceID, "connection", c.ConnectionID)
			return c, nil
		}
	}
	if !ok || !c.Connected() {
		return controlplane.AdConnection{}, fmt.Errorf("%w: the workspace has no advertising connection to disconnect", ErrConflict)
	}
	token, err := s.conns.RefreshToken(ctx, workspaceID)
	if err != nil {
		// A token no configured key opens cannot be revoked; erasing it would leave a live grant
		// at Google with no way to end it from here.
		return controlplane.AdConnection{}, fmt.Errorf("disconnect: %w", err)
	}
	if err := s.oauth.Revoke(ctx, token); err != nil {
		detail := strings.TrimPrefix(strings.ReplaceAll(err.Error(), token, "[credential]"), ErrRevocationUnconfirmed.Error()+": ")
		unconfirmed := fmt.Errorf("%w: %s; the connection and its credential are kept: retry the disconnection", ErrRevocationUnconfirmed, detail)
		s.log.Warn("ads disconnection not confirmed by Google", "workspace", workspaceID, "err", detail)
		if _, serr := s.conns.DisconnectUnconfirmed(ctx, actor, workspaceID, unconfirmed.Error()); serr != nil {
			return controlplane.AdConnection{}, errors.Join(unconfirmed, serr)
		}
		return controlplane.AdConnection{}, unconfirmed
	}
	// Mappings first: should the connection write fail, the retry finds the grant already revoked
	// (Google answers invalid_token, which counts as confirmed) and finishes.
	if _, err := s.mappings.DisableAll(ctx, actor, workspaceID, controlplane.AdDisabledByDisconnect, disconnectedReason); err != nil {
		return controlplane.AdConnection{}, err
	}
	c, err = s.conns.Disconnect(ctx, actor, workspaceID)
	if errors.Is(err, controlplane.ErrEraseUnconfirmed) {
		s.log.Warn("ads connection disconnected; the stored credential's deletion has not finished", "workspace", workspaceID, "err", err)
		return controlplane.AdConnection{}, fmt.Errorf("Google confirmed the revocation and the connection is disconnected, but %w", err)
	}
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	s.log.Info("ads connection disconnected", "workspace", workspaceID, "connection", c.ConnectionID)
	return c, nil
}
