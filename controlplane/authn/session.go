package authn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
)

// CookieName is the console session's cookie.
const CookieName = "revtrack_session"

// ErrNoSession: no cookie, or the session it names ended (signed out, expired or revoked).
var ErrNoSession = errors.New("not signed in, or the session ended: sign in again")

// Session is a signed-in browser. The session ID itself is only in the cookie: Redis keys hold its
// SHA-256, so a dump of Redis signs no one in.
type Session struct {
	Hash      string
	UserID    string
	CSRFToken string
	CreatedAt time.Time
	LastSeen  time.Time
}

// Sessions keeps console sessions in Redis: one hash per session, and a set of a user's session
// hashes so that a password change or a removal ends them all at once.
type Sessions struct {
	rdb    redis.UniversalClient
	prefix string
	cfg    SessionConfig
	// Now is the clock that idle and absolute expiry are measured with (tests move it).
	Now func() time.Time
	// secure: the cookie carries Secure unless the base URL is plain http on a loopback host.
	secure bool
	origin string
}

// NewSessions returns the store of sessions; baseURL is the public URL of the console.
func NewSessions(rdb redis.UniversalClient, prefix string, cfg SessionConfig, baseURL string) (*Sessions, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("sessions: base URL %q", baseURL)
	}
	return &Sessions{rdb: rdb, prefix: prefix, cfg: cfg, Now: time.Now, secure: !(u.Scheme == "http" && isLoopback(u.Hostname())),
		origin: u.Scheme + "://" + u.Host}, nil
}

// Config is the sessions' configuration.
func (s *Sessions) Config() SessionConfig { return s.cfg }

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Sessions) key(hash string) string       { return s.prefix + "session:" + hash }
func (s *Sessions) userKey(userID string) string { return s.prefix + "user-sessions:" + userID }

func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

func random256() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Create starts a session for a user and returns its ID (the cookie's value, shown once).
func (s *Sessions) Create(ctx context.Context, userID string) (string, Session, error) {
	id := random256()
	now := s.Now()
	sess := Session{Hash: hashID(id), UserID: userID, CSRFToken: random256(), CreatedAt: now, LastSeen: now}
	// The session is found from its cookie and the index from the user, so the two keys are in
	// different slots of a Redis Cluster, where redisx.Tx writes them in turn: the index first, so
	// that EndUser always finds a session that exists.
	err := redisx.Tx(ctx, s.rdb, func(p redis.Pipeliner) {
		p.SAdd(ctx, s.userKey(userID), sess.Hash)
		p.PExpire(ctx, s.userKey(userID), s.cfg.AbsoluteTimeout)
	}, func(p redis.Pipeliner) {
		p.HSet(ctx, s.key(sess.Hash), "user", userID, "csrf", sess.CSRFToken,
			"created", now.UnixMilli(), "seen", now.UnixMilli())
		p.PExpire(ctx, s.key(sess.Hash), s.cfg.IdleTimeout)
	})
	if err != nil {
		return "", Session{}, fmt.Errorf("store session: %w", err)
	}
	return id, sess, nil
}

// touch marks a session used, only while it still exists: a session ended meanwhile must not be
// brought back by a request that read it a moment before.
var touch = redis.NewScript(`if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'seen', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// Lookup resolves a cookie's session ID, ends it when idle or absolute expiry has passed, and
// marks it used. ErrNoSession when there is no live session.
func (s *Sessions) Lookup(ctx context.Context, id string) (Session, error) {
	if id == "" {
		return Session{}, ErrNoSession
	}
	h := hashID(id)
	v, err := s.rdb.HGetAll(ctx, s.key(h)).Result()
	if err != nil {
		return Session{}, fmt.Errorf("read session: %w", err)
	}
	created, _ := strconv.ParseInt(v["created"], 10, 64)
	seen, _ := strconv.ParseInt(v["seen"], 10, 64)
	if v["user"] == "" || v["csrf"] == "" || created == 0 {
		return Session{}, ErrNoSession
	}
	sess := Session{Hash: h, UserID: v["user"], CSRFToken: v["csrf"], CreatedAt: time.UnixMilli(created), LastSeen: time.UnixMilli(seen)}
	now := s.Now()
	if now.Sub(sess.LastSeen) >= s.cfg.IdleTimeout || now.Sub(sess.CreatedAt) >= s.cfg.AbsoluteTimeout {
		_ = s.end(ctx, sess)
		return Session{}, ErrNoSession
	}
	// Redis forgets the session by itself at whichever expiry comes first.
	ttl := min(s.cfg.IdleTimeout, s.cfg.AbsoluteTimeout-now.Sub(sess.CreatedAt))
	if err := touch.Run(ctx, s.rdb, []string{s.key(h)}, now.UnixMilli(), ttl.Milliseconds()).Err(); err != nil {
		return Session{}, fmt.Errorf("touch session: %w", err)
	}
	sess.LastSeen = now
	return sess, nil
}

// End ends one session (sign-out).
func (s *Sessions) End(ctx context.Context, sess Session) error { return s.end(ctx, sess) }

func (s *Sessions) end(ctx context.Context, sess Session) error {
	// The session goes first: once it is gone the cookie is refused, whatever the index says.
	return redisx.Tx(ctx, s.rdb, func(p redis.Pipeliner) {
		p.Del(ctx, s.key(sess.Hash))
	}, func(p redis.Pipeliner) {
		p.SRem(ctx, s.userKey(sess.UserID), sess.Hash)
	})
}

// EndUser ends every session of a user except the one whose hash is keep ("" ends all), at once:
// the next request of each is refused. It returns how many ended.
func (s *Sessions) EndUser(ctx context.Context, userID, keep string) (int, error) {
	hashes, err := s.rdb.SMembers(ctx, s.userKey(userID)).Result()
	if err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	// Sessions first, the index last (see end); on a Redis Cluster each session is its own MULTI.
	var groups []func(redis.Pipeliner)
	var ended []any
	for _, h := range hashes {
		if h == keep {
			continue
		}
		groups = append(groups, func(p redis.Pipeliner) { p.Del(ctx, s.key(h)) })
		ended = append(ended, h)
	}
	n := len(ended)
	if n > 0 {
		groups = append(groups, func(p redis.Pipeliner) { p.SRem(ctx, s.userKey(userID), ended...) })
	}
	if err = redisx.Tx(ctx, s.rdb, groups...); err != nil {
		return 0, fmt.Errorf("end sessions: %w", err)
	}
	return n, nil
}

// Cookie is the Set-Cookie of a new session: HttpOnly (no script reads it), SameSite=Strict (no
// other site's page sends it), Secure outside loopback http, for the absolute lifetime.
func (s *Sessions) Cookie(id string) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.cfg.AbsoluteTimeout.Seconds())}
}

// ClearCookie removes the cookie (sign-out).
func (s *Sessions) ClearCookie() *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1}
}
