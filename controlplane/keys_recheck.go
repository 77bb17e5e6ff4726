package controlplane

import (
	"context"
	"errors"
)

// AuthenticateKeyID checks that the key with this ID still authenticates, as AuthenticateAPIKey
// would find it now: it exists and is not revoked, in ClickHouse (where a revocation is written
// first) and in the shared cache every request's authentication reads. An operation a key started
// and something else finishes later (the advertising OAuth callback, which a browser reaches
// without the key) calls it so that revoking the key also stops what it started. It never needs
// the key itself; unknown and revoked keys are ErrInvalidKey.
func (s *Store) AuthenticateKeyID(ctx context.Context, keyID string) (Principal, error) {
	if keyID == "" {
		return Principal{}, ErrInvalidKey
	}
	if p, ok, err := s.sessionPrincipal(ctx, keyID); ok {
		return p, err // a console session's stand-in (users.go): the person's membership now
	}
	k, hash, err := s.apiKeyByID(ctx, keyID)
	if errors.Is(err, ErrNotFound) {
		return Principal{}, ErrInvalidKey
	}
	if err != nil {
		return Principal{}, err
	}
	if k.RevokedAt != nil {
		return Principal{}, ErrInvalidKey
	}
	ck, err := s.lookupKey(ctx, hash)
	if err != nil {
		return Principal{}, err
	}
	if ck.Revoked || ck.KeyID != k.ID {
		return Principal{}, ErrInvalidKey
	}
	return Principal{WorkspaceID: k.WorkspaceID, KeyID: k.ID, Scope: k.Scope}, nil
}
