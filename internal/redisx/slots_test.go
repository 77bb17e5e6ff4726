package redisx_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// Slot agrees with CLUSTER KEYSLOT of Redis 7.0, hash tags included.
func TestSlot(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":            12739,
		"foo":                  12182,
		"bar":                  5061,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"foo{}{bar}":           8363, // an empty tag: the whole key
		"foo{{bar}}zap":        4015, // the tag is "{bar"
		"foo{bar}{zap}":        5061, // the first tag only
		"{bar":                 4015, // no closing brace: the whole key
	} {
		if got := redisx.Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// SlotChecked refuses, as a cluster would, a script, a MULTI and a multi-key command whose keys are
// in several slots, and lets through the same with one hash tag, and a plain pipeline over slots.
func TestSlotChecked(t *testing.T) {
	ctx := testenv.Ctx(t)
	rc := testenv.RedisConfig(t)
	one, err := redisx.Open(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	single, ok := one.(*redis.Client)
	if !ok {
		t.Skipf("the test Redis is a %T: SlotChecked holds a single Redis to a cluster's rules", one)
	}
	c := redisx.NewSlotChecked(single)
	if !redisx.Sharded(c) {
		t.Fatal("a SlotChecked client is not Sharded")
	}
	p := rc.KeyPrefix
	script := redis.NewScript(`return redis.call("MSET", KEYS[1], "1", KEYS[2], "2")`)
	crossSlot := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, redis.ErrCrossSlot) {
			t.Errorf("%s over two slots: %v, want CROSSSLOT", what, err)
		}
	}
	crossSlot("script", script.Run(ctx, c, []string{p + "a", p + "b"}).Err())
	crossSlot("MGET", c.MGet(ctx, p+"a", p+"b").Err())
	crossSlot("DEL", c.Del(ctx, p+"a", p+"b").Err())
	_, err = c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, p+"a", 1, 0)
		pipe.Set(ctx, p+"b", 1, 0)
		return nil
	})
	crossSlot("MULTI", err)

	if err := script.Run(ctx, c, []string{p + "{t}:a", p + "{t}:b"}).Err(); err != nil && !errors.Is(err, redis.Nil) {
		t.Errorf("script in one slot: %v", err)
	}
	if _, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, p+"{t}:a", 1, 0)
		pipe.Incr(ctx, p+"{t}:b")
		return nil
	}); err != nil {
		t.Errorf("MULTI in one slot: %v", err)
	}
	if _, err := c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, p+"a", 1, 0)
		pipe.Set(ctx, p+"b", 1, 0)
		return nil
	}); err != nil {
		t.Errorf("plain pipeline over two slots: %v", err)
	}
	// The helpers take their cluster path.
	if err := redisx.Tx(ctx, c, func(pipe redis.Pipeliner) { pipe.Set(ctx, p+"a", "x", 0) },
		func(pipe redis.Pipeliner) { pipe.Set(ctx, p+"b", "y", 0) }); err != nil {
		t.Errorf("Tx over two slots, a group each: %v", err)
	}
	vals, err := redisx.MGet(ctx, c, p+"a", p+"none", p+"b")
	if err != nil || len(vals) != 3 || vals[0] != "x" || vals[1] != nil || vals[2] != "y" {
		t.Errorf("MGet = %v, %v; want [x <nil> y]", vals, err)
	}
	if err := redisx.DeleteMatching(ctx, c, p+"*"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, p+"a").Result(); err != nil || n != 0 {
		t.Errorf("after DeleteMatching: %d keys, %v", n, err)
	}
}
