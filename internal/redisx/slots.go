package redisx

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// Slot is the Redis Cluster slot of key: CRC16 (XMODEM) of its hash tag, the part between the first
// "{" and the next "}" when that part is not empty, else of the whole key, modulo 16384
// (Redis Cluster specification, "Keys distribution model").
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % SlotCount
}

// SlotChecked is a single Redis held to a Redis Cluster's rules, so the ordinary test stack finds a
// multi-key operation that a cluster would refuse: a script, MULTI or multi-key command whose keys
// are in several slots fails with CROSSSLOT, and the helpers of this package (Tx, MGet) take their
// cluster path. A script's undeclared keys escape it; the tests on a real cluster catch those.
type SlotChecked struct {
	*redis.Client
}

// NewSlotChecked adds the check to c.
func NewSlotChecked(c *redis.Client) *SlotChecked {
	c.AddHook(slotHook{})
	return &SlotChecked{Client: c}
}

type slotHook struct{}

func (slotHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (slotHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := sameSlot(cmdKeys(cmd)); err != nil {
			cmd.SetErr(fmt.Errorf("%w: %s", err, cmd.Name()))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (slotHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		tx := len(cmds) > 0 && cmds[0].Name() == "multi"
		var all []string
		for _, cmd := range cmds {
			keys := cmdKeys(cmd)
			err := sameSlot(keys)
			if err == nil && tx {
				if keys == nil {
					keys = firstKey(cmd)
				}
				all = append(all, keys...)
				err = sameSlot(all)
			}
			if err != nil {
				err = fmt.Errorf("%w: %s in a %s", err, cmd.Name(), map[bool]string{true: "MULTI", false: "pipeline"}[tx])
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// errCrossSlot is a cluster's answer, so callers see what production would show them.
var errCrossSlot = redis.ErrCrossSlot

func sameSlot(keys []string) error {
	for _, k := range keys[min(1, len(keys)):] {
		if Slot(k) != Slot(keys[0]) {
			return fmt.Errorf("%w (%q, %q)", errCrossSlot, keys[0], k)
		}
	}
	return nil
}

// cmdKeys lists the keys of the multi-key commands and scripts; a one-key command needs no check.
func cmdKeys(cmd redis.Cmder) []string {
	args := cmd.Args()
	str := func(from, to, step int) []string {
		var out []string
		for i := from; i < to && i < len(args); i += step {
			out = append(out, fmt.Sprint(args[i]))
		}
		return out
	}
	switch strings.ToLower(cmd.Name()) {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		if len(args) < 3 {
			return nil
		}
		var n int
		if _, err := fmt.Sscan(fmt.Sprint(args[2]), &n); err != nil {
			return nil
		}
		return str(3, 3+n, 1)
	case "mget", "del", "unlink", "exists", "touch", "watch", "sinter", "sunion", "sdiff", "sinterstore", "sunionstore",
		"sdiffstore", "pfcount", "pfmerge":
		return str(1, len(args), 1)
	case "rename", "renamenx", "smove", "rpoplpush", "lmove", "blmove", "copy":
		return str(1, 3, 1)
	case "mset", "msetnx":
		return str(1, len(args), 2)
	case "blpop", "brpop", "bzpopmin", "bzpopmax":
		return str(1, len(args)-1, 1)
	}
	return nil
}

// firstKey is the key of a one-key command: its first argument, but for the keyless commands a
// MULTI may hold.
func firstKey(cmd redis.Cmder) []string {
	args := cmd.Args()
	switch strings.ToLower(cmd.Name()) {
	case "multi", "exec", "discard", "ping", "echo", "time", "select", "publish", "script", "function", "info":
		return nil
	}
	if len(args) < 2 {
		return nil
	}
	return []string{fmt.Sprint(args[1])}
}
