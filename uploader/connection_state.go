package uploader

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Who started a connection. The admin API's flow is finished by a browser, which must be the one
// that opened the begin URL; the operator's command-line flow is finished on the command line.
const (
	originAPI      = "api"
	originOperator = "operator"
)

// pendingConnect is a started connection waiting for Google's callback. The callback arrives from
// the user's browser without the admin credential, so the state says which workspace, actor and key
// it belongs to, and the browser proves it is the one that began the flow: it is random, single
// use and short-lived.
type pendingConnect struct {
	WorkspaceID string `json:"workspaceId"`
	Actor       string `json:"actor"`
	Origin      string `json:"origin"`
	// KeyID is the workspace key that started the connection through the admin API (never the key
	// itself): the callback checks it is still valid and admin-scoped.
	KeyID string `json:"keyId,omitempty"`
	// UserID is the person who started it from the console with their session (no key): the
	// callback checks they are still an owner or admin of the workspace.
	UserID string `json:"userId,omitempty"`
	// Verifier is the PKCE code verifier; only its S256 challenge went to Google.
	Verifier string `json:"verifier"`
	// BindingHash is the SHA-256 of the nonce the begin URL set as a cookie in the browser that
	// opened it; empty until then (and for the operator's flow).
	BindingHash string    `json:"bindingHash,omitempty"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// connectStates keeps pending connections in Redis under the configured key prefix.
type connectStates struct {
	rdb    redis.Cmdable
	prefix string
	ttl    time.Duration
}

func (s connectStates) key(state string) string  { return s.prefix + "ads:oauth-state:" + state }
func (s connectStates) beginKey(b string) string { return s.prefix + "ads:oauth-begin:" + b }

// randomToken is 32 random bytes, base64url: states, begin tokens, nonces, IDs.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// digest is how a browser secret is stored: its SHA-256, so the Redis value alone proves nothing.
func digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// matches compares a presented secret with a stored digest in constant time; an empty digest
// (nothing bound) never matches.
func matches(storedDigest, presented string) bool {
	return storedDigest != "" && presented != "" && subtle.ConstantTimeCompare([]byte(storedDigest), []byte(digest(presented))) == 1
}

// put stores p under a new random state and returns the state.
func (s connectStates) put(ctx context.Context, p pendingConnect) (string, error) {
	state, err := randomToken()
	if err != nil {
		return "", err
	}
	p.ExpiresAt = time.Now().Add(s.ttl).UTC()
	v, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	if err := s.rdb.Set(ctx, s.key(state), v, s.ttl).Err(); err != nil {
		return "", fmt.Errorf("store OAuth state: %w", err)
	}
	return state, nil
}

// putBegin returns a new single-use begin token that leads to state.
func (s connectStates) putBegin(ctx context.Context, state string) (string, error) {
	b, err := randomToken()
	if err != nil {
		return "", err
	}
	if err := s.rdb.Set(ctx, s.beginKey(b), state, s.ttl).Err(); err != nil {
		return "", fmt.Errorf("store OAuth begin token: %w", err)
	}
	return b, nil
}

// takeBegin returns and deletes the state a begin token leads to (GETDEL: only the first browser
// to open the begin URL gets the flow). ok is false for an unknown, used or expired token.
func (s connectStates) takeBegin(ctx context.Context, b string) (string, bool, error) {
	if b == "" || len(b) > 128 {
		return "", false, nil
	}
	state, err := s.rdb.GetDel(ctx, s.beginKey(b)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read OAuth begin token: %w", err)
	}
	return state, true, nil
}

// get returns the pending connection of state without using it up; raw is its stored form, for take.
func (s connectStates) get(ctx context.Context, state string) (p pendingConnect, raw []byte, ok bool, err error) {
	if state == "" || len(state) > 128 {
		return p, nil, false, nil
	}
	raw, err = s.rdb.Get(ctx, s.key(state)).Bytes()
	if errors.Is(err, redis.Nil) {
		return p, nil, false, nil
	}
	if err != nil {
		return p, nil, false, fmt.Errorf("read OAuth state: %w", err)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, nil, false, nil
	}
	return p, raw, true, nil
}

// bind records the browser-binding digest on a pending connection, keeping its expiry.
func (s connectStates) bind(ctx context.Context, state string, p pendingConnect) error {
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := s.rdb.SetArgs(ctx, s.key(state), v, redis.SetArgs{Mode: "XX", KeepTTL: true}).Err(); err != nil {
		if errors.Is(err, redis.Nil) {
			return fmt.Errorf("%w: the connection request expired: start the connection again", ErrInvalid)
		}
		return fmt.Errorf("store OAuth state: %w", err)
	}
	return nil
}

// take deletes the pending connection of state (GETDEL: a state is used once, even by two racing
// callbacks). It reports false when the state is gone or no longer what the caller checked (raw).
func (s connectStates) take(ctx context.Context, state string, raw []byte) (bool, error) {
	v, err := s.rdb.GetDel(ctx, s.key(state)).Bytes()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read OAuth state: %w", err)
	}
	return bytes.Equal(v, raw), nil
}
