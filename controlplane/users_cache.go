package controlplane

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// A console session reads its person and their memberships on every request. Both are cached in
// Redis the way keys and workspaces are: every write SETs the fresh value (so a role change or a
// removal is seen at once by every instance), a reader that missed may only SETNX what it read,
// which never overwrites a newer write. The password hash is not in the cache.

type cachedUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

type cachedMembership struct {
	WorkspaceID string `json:"workspaceId"`
	Role        string `json:"role"`
}

func (s *Store) userCacheKey(id string) string       { return s.prefix + "user:" + id }
func (s *Store) membershipCacheKey(id string) string { return s.prefix + "memberships:" + id }

// SessionUser is UserByID without the password hash, from the cache when possible.
func (s *Store) SessionUser(ctx context.Context, id string) (User, error) {
	if b, err := s.rdb.Get(ctx, s.userCacheKey(id)).Bytes(); err == nil {
		var c cachedUser
		if json.Unmarshal(b, &c) == nil {
			return User{ID: c.ID, Email: c.Email, Name: c.Name}, nil
		}
	} else if err != redis.Nil {
		return User{}, fmt.Errorf("user cache: %w", err)
	}
	u, err := s.UserByID(ctx, id)
	if err != nil {
		return User{}, err
	}
	b, _ := json.Marshal(cachedUser{ID: u.ID, Email: u.Email, Name: u.Name})
	if err := s.rdb.SetNX(ctx, s.userCacheKey(id), b, s.CacheTTL).Err(); err != nil {
		return User{}, fmt.Errorf("user cache: %w", err)
	}
	return User{ID: u.ID, Email: u.Email, Name: u.Name}, nil
}

func (s *Store) publishUser(ctx context.Context, u User) error {
	b, _ := json.Marshal(cachedUser{ID: u.ID, Email: u.Email, Name: u.Name})
	if err := s.rdb.Set(ctx, s.userCacheKey(u.ID), b, s.CacheTTL).Err(); err != nil {
		return fmt.Errorf("publish user: %w", err)
	}
	return nil
}

func (s *Store) queryMemberships(ctx context.Context, userID string) ([]cachedMembership, error) {
	rows, err := s.ch.Query(ctx, selectMemberships, userID)
	if err != nil {
		return nil, fmt.Errorf("query memberships: %w", err)
	}
	defer rows.Close()
	out := []cachedMembership{}
	for rows.Next() {
		var m cachedMembership
		var del uint8
		if err := rows.Scan(&m.WorkspaceID, &m.Role, &del); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// cachedMemberships are a user's workspace IDs and roles, from the cache when possible.
func (s *Store) cachedMemberships(ctx context.Context, userID string) ([]cachedMembership, error) {
	key := s.membershipCacheKey(userID)
	if b, err := s.rdb.Get(ctx, key).Bytes(); err == nil {
		var ms []cachedMembership
		if json.Unmarshal(b, &ms) == nil {
			return ms, nil
		}
	} else if err != redis.Nil {
		return nil, fmt.Errorf("membership cache: %w", err)
	}
	ms, err := s.queryMemberships(ctx, userID)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(ms)
	if err := s.rdb.SetNX(ctx, key, b, s.CacheTTL).Err(); err != nil {
		return nil, fmt.Errorf("membership cache: %w", err)
	}
	return ms, nil
}

// publishMemberships writes a user's memberships, read back from ClickHouse after a change, over
// the cache entry.
func (s *Store) publishMemberships(ctx context.Context, userID string) error {
	ms, err := s.queryMemberships(ctx, userID)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(ms)
	if err := s.rdb.Set(ctx, s.membershipCacheKey(userID), b, s.CacheTTL).Err(); err != nil {
		return fmt.Errorf("publish memberships: %w", err)
	}
	return nil
}
