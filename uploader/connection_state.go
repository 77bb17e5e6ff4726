package uploader

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// pendingConnect is a started connection waiting for Google's callback. The callback arrives from
// the user's browser without the admin credential, so the state alone says which workspace and
// actor it belongs to: it is random, single use and short-lived.
type pendingConnect struct {
	WorkspaceID string `json:"workspaceId"`
	Actor       string `json:"actor"`
	// Verifier is the PKCE code verifier; only its S256 challenge went to Google.
	Verifier string `json:"verifier"`
}

// connectStates keeps pending connections in Redis under the configured key prefix.
type connectStates struct {
	rdb    redis.Cmdable
	prefix string
	ttl    time.Duration
}

func (s connectStates) key(state string) string { return s.prefix + "ads:oauth-state:" + state }

// put stores p under a new random state and returns the state.
func (s connectStates) put(ctx context.Context, p pendingConnect) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	state := base64.RawURLEncoding.EncodeToString(b[:])
	v, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	if err := s.rdb.Set(ctx, s.key(state), v, s.ttl).Err(); err != nil {
		return "", fmt.Errorf("store OAuth state: %w", err)
	}
	return state, nil
}

// take returns and deletes the pending connection of state (GETDEL: a state is used once, even by
// two racing callbacks). ok is false for an unknown, used or expired state.
func (s connectStates) take(ctx context.Context, state string) (p pendingConnect, ok bool, err error) {
	if state == "" || len(state) > 128 {
		return p, false, nil
	}
	v, err := s.rdb.GetDel(ctx, s.key(state)).Bytes()
	if errors.Is(err, redis.Nil) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read OAuth state: %w", err)
	}
	if err := json.Unmarshal(v, &p); err != nil {
		return p, false, nil
	}
	return p, true, nil
}
