package uploader

import (
	"context"
	"sync"

	"golang.org/x/oauth2"
)

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
