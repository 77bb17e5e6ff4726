package uploader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// dueRescanInterval is how often the dispatcher and the poller rebuild their due hints from the
// whole queue. The rebuild is what makes a lost hint (a crash between a row's insert and its hint,
// Redis unavailable or flushed, a row written by a process without hints) cost a delay of at most
// this long instead of a row never sent; every round in between reads only the hints.
const dueRescanInterval = time.Minute

// hintKind names one of the two loops that find work through due hints.
type hintKind string

const (
	hintDispatch hintKind = "dispatch"
	hintPoll     hintKind = "poll"
)

// dueHints is a Redis index of which workspaces may have upload-queue rows due, so that a round
// does not aggregate the whole queue to find out (the queue keeps 180 days of row versions). Per
// kind, a sorted set holds each workspace with the earliest time (Unix seconds, as next_attempt_at
// is stored) at which one of its rows may be due, and a hash holds a generation per workspace that
// every hint write increments.
//
// Every row version goes through rowStore.put, which lowers the workspace's time to the row's
// (mark) once ClickHouse has the row. A loop reads the workspaces whose time has come; after a
// pass over a workspace it replaces the time by the workspace's actual schedule, read from
// ClickHouse (settle). The generation, read before that read, guards the replacement: a row
// marked in between (a new job, a Retry) changed it, and the lowered time stays. Hints only ever
// err early, which costs a pass that finds nothing, except when one is lost: dueRescanInterval.
type dueHints struct {
	client redis.UniversalClient
	prefix string
	log    *slog.Logger
}

var (
	// hintMark lowers each workspace's time (ARGV: workspace, seconds, …) and bumps its generation.
	hintMark = redis.NewScript(`
for i = 1, #ARGV, 2 do
  local ws, at = ARGV[i], tonumber(ARGV[i + 1])
  local cur = redis.call("ZSCORE", KEYS[1], ws)
  if not cur or tonumber(cur) > at then
    redis.call("ZADD", KEYS[1], at, ws)
  end
  redis.call("HINCRBY", KEYS[2], ws, 1)
end
return 0`)
	// hintSettle sets (ARGV[3] seconds) or removes (ARGV[3] empty) a workspace's time, only if
	// its generation is still ARGV[2].
	hintSettle = redis.NewScript(`
local gen = redis.call("HGET", KEYS[2], ARGV[1]) or ""
if gen ~= ARGV[2] then
  return 0
end
if ARGV[3] == "" then
  redis.call("ZREM", KEYS[1], ARGV[1])
else
  redis.call("ZADD", KEYS[1], ARGV[3], ARGV[1])
end
return 1`)
)

// keys are the sorted set and the generation hash of kind; the braces keep both in one Redis
// Cluster slot, as the scripts need.
func (h *dueHints) keys(kind hintKind) []string {
	set := h.prefix + "ads-due:{" + string(kind) + "}"
	return []string{set, set + ":gen"}
}

// hintOf says which loop will pick r up and from when: a row the dispatcher sends (queued, or
// retrying an ingestion), or one whose diagnostics the poller fetches. It mirrors dispatchableSQL
// and pollableSQL.
func hintOf(r Row) (hintKind, int64, bool) {
	var at int64
	if r.NextAttemptAt != nil {
		at = r.NextAttemptAt.Unix()
	}
	switch {
	case r.Status == StatusQueued || r.Status == StatusRetrying && r.RequestID == "":
		return hintDispatch, at, true
	case (r.Status == StatusAccepted || r.Status == StatusRetrying) && at > 0:
		return hintPoll, at, true
	}
	return "", 0, false
}

// mark records the hints of row versions ClickHouse has accepted. A failure is logged, not
// returned: the rows are written, and the next rebuild finds them.
func (h *dueHints) mark(ctx context.Context, rows []Row) {
	if h == nil {
		return
	}
	at := map[hintKind]map[string]int64{}
	for _, r := range rows {
		kind, t, ok := hintOf(r)
		if !ok {
			continue
		}
		if at[kind] == nil {
			at[kind] = map[string]int64{}
		}
		if cur, ok := at[kind][r.WorkspaceID]; !ok || t < cur {
			at[kind][r.WorkspaceID] = t
		}
	}
	for kind, byWS := range at {
		if err := h.lower(ctx, kind, byWS); err != nil {
			h.log.Warn("due hint not written; the rows are found by the next rescan", "kind", kind, "err", err)
		}
	}
}

// lower brings the workspaces' times down to at most the given ones.
func (h *dueHints) lower(ctx context.Context, kind hintKind, at map[string]int64) error {
	if len(at) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(at))
	for ws, t := range at {
		args = append(args, ws, t)
	}
	if err := hintMark.Run(ctx, h.client, h.keys(kind), args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("mark due hints: %w", err)
	}
	return nil
}

// due lists the workspaces whose time has come at now, the longest waiting first.
func (h *dueHints) due(ctx context.Context, kind hintKind, now time.Time) ([]string, error) {
	wss, err := h.client.ZRangeByScore(ctx, h.keys(kind)[0], &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.Unix(), 10)}).Result()
	if err != nil {
		return nil, fmt.Errorf("read due hints: %w", err)
	}
	return wss, nil
}

// generation is the workspace's current generation ("" before its first hint).
func (h *dueHints) generation(ctx context.Context, kind hintKind, ws string) (string, error) {
	gen, err := h.client.HGet(ctx, h.keys(kind)[1], ws).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read due hint generation: %w", err)
	}
	return gen, nil
}

// settle replaces the workspace's time by next (nil: nothing scheduled) unless its generation
// moved on from gen.
func (h *dueHints) settle(ctx context.Context, kind hintKind, ws, gen string, next *time.Time) error {
	at := ""
	if next != nil {
		at = strconv.FormatInt(next.Unix(), 10)
	}
	if err := hintSettle.Run(ctx, h.client, h.keys(kind), ws, gen, at).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("settle due hint: %w", err)
	}
	return nil
}

// dueIndex is how one loop (the dispatcher or the poller) finds its workspaces: the hints, rebuilt
// from the whole queue at the first round and every dueRescanInterval. Only the loop's goroutine
// uses it.
type dueIndex struct {
	kind     hintKind
	rows     rowStore
	hints    *dueHints
	rescanAt time.Time
}

// workspaces are those whose time has come at now.
func (x *dueIndex) workspaces(ctx context.Context, now time.Time) ([]string, error) {
	if !now.Before(x.rescanAt) {
		sched, err := x.rows.schedule(ctx, x.wholeQuery())
		if err != nil {
			return nil, err
		}
		at := make(map[string]int64, len(sched))
		for ws, t := range sched {
			at[ws] = t.Unix()
		}
		if err := x.hints.lower(ctx, x.kind, at); err != nil {
			return nil, err
		}
		x.rescanAt = now.Add(dueRescanInterval)
	}
	return x.hints.due(ctx, x.kind, now)
}

// settle sets ws's hint to its schedule after a pass that left nothing due behind it (as far as
// the pass knows: a row written since keeps the hint due).
func (x *dueIndex) settle(ctx context.Context, ws string) error {
	gen, err := x.hints.generation(ctx, x.kind, ws)
	if err != nil {
		return err
	}
	sched, err := x.rows.schedule(ctx, x.oneQuery(), ws)
	if err != nil {
		return err
	}
	var next *time.Time
	if t, ok := sched[ws]; ok {
		next = &t
	}
	return x.hints.settle(ctx, x.kind, ws, gen, next)
}

func (x *dueIndex) wholeQuery() string {
	if x.kind == hintPoll {
		return selectPollSchedule
	}
	return selectDispatchSchedule
}

func (x *dueIndex) oneQuery() string {
	if x.kind == hintPoll {
		return selectPollScheduleOf
	}
	return selectDispatchScheduleOf
}
