package ingest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
)

// The one-round-trip admission (docs/BENCHMARKS.md, "Edge vs floor", issue 17). A request with a
// source's own keys costs the edge one Redis script: it reads the control plane's flat records of
// the source and its workspace (controlplane/sources_edge.go), checks them in the order the control
// plane and checkWorkspace do, and only then counts the rate and reserves the event ID. A caller
// without the private key (or, for a browser batch, from an origin the source does not allow) is
// refused before the count, so it cannot spend a source's limit. When a record is absent (its first
// request, or its TTL ran out) the request takes the path through the control plane instead, which
// creates the records for the next one.

// edgeRecords is what the control plane offers that path (controlplane.Store).
type edgeRecords interface {
	EdgeSourceKey(workspaceID, sourceID string) string
	EdgeWorkspaceKey(workspaceID string) string
	FillEdge(ctx context.Context, src controlplane.Source, w controlplane.Workspace) error
}

// edgeAdmitter runs the script (RedisAdmitter).
type edgeAdmitter interface {
	AdmitEdge(ctx context.Context, q edgeQuery) (edgeResult, error)
}

var (
	_ edgeRecords  = (*controlplane.Store)(nil)
	_ edgeAdmitter = (*RedisAdmitter)(nil)
)

// edgeRef says where a public key's records and counters are. A public key belongs to one source
// and a source to one workspace for ever, so a ref never goes stale: what can change (rotation,
// disabling, the subscription, the selected apps) lives in the records every request reads, and a
// rotated-away key stops matching its source's record. All of a workspace's keys share its ID as
// hash tag, so one script's keys are in one slot of a Redis Cluster.
type edgeRef struct {
	sourceID, workspaceID     string
	sourceKey, workspaceKey   string
	serverLimit, browserLimit string // rate-limit keys (RedisLimiter.windowKey adds the window)
	scope                     string // event-ID scope (RedisDeduper.key)
}

func newEdgeRef(recs edgeRecords, sourceID, workspaceID string) *edgeRef {
	tag := "{" + workspaceID + "}:" + sourceID
	r := &edgeRef{sourceID: sourceID, workspaceID: workspaceID, serverLimit: "srv:" + tag, browserLimit: "web:" + tag, scope: tag}
	if recs != nil {
		r.sourceKey, r.workspaceKey = recs.EdgeSourceKey(workspaceID, sourceID), recs.EdgeWorkspaceKey(workspaceID)
	}
	return r
}

// maxEdgeRefs bounds the refs kept; only keys that resolved to a source are ever added, so random
// keys cannot fill it, and past the bound it starts over (the next request of each key takes the
// control plane's path once).
const maxEdgeRefs = 1 << 16

type edgeRefs struct {
	m sync.Map // public key → *edgeRef
	n atomic.Int64
}

func (r *edgeRefs) get(pk string) (*edgeRef, bool) {
	v, ok := r.m.Load(pk)
	if !ok {
		return nil, false
	}
	return v.(*edgeRef), true
}

func (r *edgeRefs) put(pk string, ref *edgeRef) {
	if r.n.Add(1) > maxEdgeRefs {
		r.m.Clear()
		r.n.Store(1)
	}
	r.m.Store(pk, ref)
}

// Modes of the script: admit a valid server event (count and reserve), count an invalid one, or
// admit a browser batch (origin check and count).
const (
	modeAdmit   = "a"
	modeCount   = "c"
	modeBrowser = "b"
)

type edgeQuery struct {
	ref                                  *edgeRef
	mode                                 string
	publicKey, keyHash, teamSlug, origin string
	limitKey                             string
	limit                                Limit
	eventID, token                       string
}

// edgeResult is the script's answer: status "ok", "miss" (a record is absent) or the refusal,
// the source's app, and for modeAdmit the reservation found.
type edgeResult struct {
	status string
	appID  string
	state  reservation
}

const (
	statusOK   = "ok"
	statusMiss = "miss"
)

// refusal is the error of a status other than ok and miss; "rate" only when rate is true (a server
// event's caller decides what an exceeded limit means).
func (r edgeResult) refusal(rate bool) error {
	if r.status == statusOK || (r.status == "rate" && !rate) {
		return nil
	}
	if err, ok := edgeRefusals[r.status]; ok {
		return err
	}
	return fmt.Errorf("admit: unexpected answer %q", r.status)
}

// edgeRefusals maps the script's refusals to the errors the control plane's path returns for them.
var edgeRefusals = map[string]error{
	"gone":     controlplane.ErrSourceUnavailable, // the public key was rotated away
	"key":      controlplane.ErrInvalidKey,        // private key or team slug not the source's
	"origin":   errOriginNotAllowed,
	"disabled": errSourceUnavailable,
	"access":   errSubscription,
	"app":      errAppNotSelected,
	"rate":     errRateLimited,
}

// edgeScript: KEYS source record, workspace record, rate window, and for modeAdmit the event ID's
// reservation. ARGV public key, key hash, team slug, origin, window ms, limit, pending TTL ms,
// pending value, mode. It compares the SHA-256 of the private key, never the key: Lua compares
// interned strings by pointer, and whatever timing creating the string may show could reveal only
// bits of a hash, which does not lead to a key (docs/SECURITY.md).
var edgeScript = redis.NewScript(`
local src = redis.call("HMGET", KEYS[1], "pk", "skh", "app", "on", "origins")
if not src[1] then return {"miss"} end
local ws = redis.call("HMGET", KEYS[2], "slug", "access", "apps")
if not ws[1] then return {"miss"} end
if src[1] ~= ARGV[1] then return {"gone"} end
local mode = ARGV[9]
if mode == "b" then
  if ARGV[4] == "" or not string.find(src[5] or "", "\n" .. ARGV[4] .. "\n", 1, true) then return {"origin"} end
elseif src[2] ~= ARGV[2] or ws[1] ~= ARGV[3] then
  return {"key"}
end
if src[4] ~= "1" then return {"disabled"} end
if ws[2] ~= "1" then return {"access"} end
if not string.find(ws[3] or "", "\n" .. src[3] .. "\n", 1, true) then return {"app"} end
local n = redis.call("INCR", KEYS[3])
if n == 1 then
  redis.call("PEXPIRE", KEYS[3], ARGV[5])
end
if n > tonumber(ARGV[6]) then return {"rate", src[3]} end
if mode ~= "a" then return {"ok", src[3]} end
if redis.call("SET", KEYS[4], ARGV[8], "NX", "PX", ARGV[7]) then
  return {"ok", src[3], "new"}
end
local v = redis.call("GET", KEYS[4])
if not v then
  redis.call("SET", KEYS[4], ARGV[8], "PX", ARGV[7])
  return {"ok", src[3], "new"}
end
return {"ok", src[3], v}`)

// AdmitEdge runs edgeScript on the Limiter's and Deduper's own keys, so a request admitted here and
// one admitted by Admit count in the same window and reserve the same ID.
func (a *RedisAdmitter) AdmitEdge(ctx context.Context, q edgeQuery) (edgeResult, error) {
	keys, args := a.edgeCall(q)
	res, err := edgeScript.Run(ctx, a.Deduper.Client, keys, args...).Slice()
	if err != nil {
		return edgeResult{}, fmt.Errorf("admit: %w", err)
	}
	return parseEdgeResult(res), nil
}

// edgeCall is edgeScript's keys and arguments for q.
func (a *RedisAdmitter) edgeCall(q edgeQuery) ([]string, []any) {
	keys := []string{q.ref.sourceKey, q.ref.workspaceKey, a.Limiter.windowKey(q.limitKey, q.limit)}
	if q.mode == modeAdmit {
		keys = append(keys, a.Deduper.key(q.ref.scope, q.eventID))
	}
	return keys, []any{q.publicKey, q.keyHash, q.teamSlug, q.origin,
		q.limit.Window.Milliseconds(), q.limit.N, a.Deduper.PendingTTL.Milliseconds(), pendingPrefix + q.token, q.mode}
}

func parseEdgeResult(res []any) edgeResult {
	var r edgeResult
	r.status, _ = res[0].(string)
	if len(res) > 1 {
		r.appID, _ = res[1].(string)
	}
	if len(res) > 2 {
		switch v, _ := res[2].(string); v {
		case "new":
			r.state = stateNew
		case doneValue:
			r.state = stateDone
		default:
			r.state = statePending
		}
	}
	return r
}
