package uploader

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/uploader/google"
)

// uploaderActor names the uploader in the audit log.
const uploaderActor = "system:uploader"

// msgCredentialRefused is the connection's last error once the platform refused its refresh token
// (invalid_grant is permanent: docs/ADS_UPLOAD.md, "A refused credential shows on the connection").
// It never holds the token.
const msgCredentialRefused = "Google refused the stored credential (invalid_grant: access removed, expired or the " +
	"Google account's password changed); uploads and diagnostics wait: connect again to resume"

// tokenCache keeps one token source per workspace so an access token is reused until it expires
// (oauth2 sources cache it) instead of a refresh per request. The entry is keyed by the refresh
// token it was made from: after a reconnect the new credential is used at once.
type tokenCache struct {
	// base is the context token refreshes run in; it outlives single requests.
	base    context.Context
	sources TokenSources
	creds   Credentials

	mu      sync.Mutex
	entries map[string]tokenEntry
}

type tokenEntry struct {
	refresh string
	ts      oauth2.TokenSource
}

func newTokenCache(sources TokenSources, creds Credentials) *tokenCache {
	return &tokenCache{base: context.Background(), sources: sources, creds: creds, entries: map[string]tokenEntry{}}
}

// get returns the workspace's token source; fresh discards a cached one (after a 401, to refresh
// once before giving up).
func (c *tokenCache) get(ctx context.Context, workspaceID string, fresh bool) (oauth2.TokenSource, error) {
	rt, err := c.creds.RefreshToken(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[workspaceID]; ok && !fresh && e.refresh == rt {
		return e.ts, nil
	}
	ts := c.sources.TokenSource(c.base, rt)
	c.entries[workspaceID] = tokenEntry{refresh: rt, ts: ts}
	return ts, nil
}

// used is the refresh token the workspace's cached source was made from ("" when none).
func (c *tokenCache) used(workspaceID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[workspaceID].refresh
}

// refused records on the workspace's connection that the token endpoint refused its credential,
// when err says so (invalid_grant); a 401 of an API with a fresh access token is not that. The rows
// keep waiting either way; a failure to record is only logged.
func (c *tokenCache) refused(ctx context.Context, workspaceID string, err error, log *slog.Logger) {
	if !errors.Is(err, google.ErrInvalidGrant) {
		return
	}
	rt := c.used(workspaceID)
	if rt == "" {
		return
	}
	if _, rerr := c.creds.CredentialRefused(context.WithoutCancel(ctx), uploaderActor, workspaceID, rt, msgCredentialRefused); rerr != nil {
		log.Warn("recording the refused credential on the connection failed", "workspace", workspaceID, "err", rerr)
	}
}
