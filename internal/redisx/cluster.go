package redisx

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A Redis Cluster runs a script, a MULTI or a multi-key command only when all its keys are in one
// slot (CROSSSLOT otherwise). The keys that one script or MULTI touches therefore carry a common
// hash tag right after the key prefix (prefix + "name:{tag}…"), and the few operations whose keys
// cannot share one (they are found from unrelated values: a public key, a session cookie) go
// through the helpers below, which keep a single Redis's behaviour exactly and split the work by
// slot on a cluster.

// Sharded reports whether c spreads keys over slots: a Redis Cluster, or SlotChecked, which holds a
// single Redis to the cluster's rules in tests.
func Sharded(c any) bool {
	switch c.(type) {
	case *redis.ClusterClient, *SlotChecked:
		return true
	}
	return false
}

// TxClient is the part of a client Tx uses.
type TxClient interface {
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// Tx applies groups of writes. On one Redis (or a Sentinel-watched primary) every group goes in one
// MULTI, as before clusters were supported, so readers see all of them or none. On a Redis Cluster a
// MULTI spans one slot only, so each group runs in its own MULTI, in the order given: the keys of a
// group must share a slot, and callers order the groups so that a reader between two of them sees a
// safe state.
func Tx(ctx context.Context, c TxClient, groups ...func(redis.Pipeliner)) error {
	if !Sharded(c) {
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, g := range groups {
				g(p)
			}
			return nil
		})
		return err
	}
	for _, g := range groups {
		if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error { g(p); return nil }); err != nil {
			return err
		}
	}
	return nil
}

// Getter is the part of a client MGet uses.
type Getter interface {
	MGet(ctx context.Context, keys ...string) *redis.SliceCmd
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// MGet reads keys in one round trip, as MGET answers: nil for an absent key, else its string. On a
// cluster, where MGET takes one slot's keys, it pipelines GETs, which the client sends to each node.
func MGet(ctx context.Context, c Getter, keys ...string) ([]any, error) {
	if !Sharded(c) {
		return c.MGet(ctx, keys...).Result()
	}
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]any, len(keys))
	for i, cmd := range cmds {
		switch v, err := cmd.Result(); {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return nil, err
		default:
			out[i] = v
		}
	}
	return out, nil
}

// ScanEach calls fn with each batch of the keys matching pattern, on every primary of a cluster
// (SCAN walks one node's keys), else on the one server. fn may run concurrently for several nodes.
func ScanEach(ctx context.Context, c redis.UniversalClient, pattern string, fn func(ctx context.Context, node redis.Cmdable, keys []string) error) error {
	scan := func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := fn(ctx, node, keys); err != nil {
					return err
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	switch cl := c.(type) {
	case *redis.ClusterClient:
		return cl.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	}
	return scan(ctx, c)
}

// DeleteMatching deletes every key matching pattern (tests and benchmarks clean their prefix with it).
func DeleteMatching(ctx context.Context, c redis.UniversalClient, pattern string) error {
	var mu sync.Mutex
	var errs []error
	err := ScanEach(ctx, c, pattern, func(ctx context.Context, node redis.Cmdable, keys []string) error {
		// One key per UNLINK: a node's keys are in several slots.
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Unlink(ctx, k)
			}
			return nil
		})
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		return nil
	})
	return errors.Join(append(errs, err)...)
}
