package controlplane

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The edge records: a flat copy of what the ingest edge checks on every request, one Redis hash per
// source and one per workspace, so that one script (ingest/edge_admit.go) reads both, checks them
// and reserves the event ID in a single round trip, with no JSON to decode anywhere
// (docs/BENCHMARKS.md, "Edge vs floor", issue 17: the JSON lookup was its own round trip and 17 % of
// the edge's process).
//
// They follow the JSON caches' rules exactly: every write of a source or workspace replaces its
// record in the same MULTI as the JSON entry (so disabling, rotating or a subscription change is
// seen at once by every instance), and a reader that filled from a possibly older read only creates
// a record that is absent (FillEdge), never overwrites one. Both keys carry the workspace ID as
// their hash tag, as do the edge's rate-limit and event-ID keys of that workspace's sources, so one
// script's keys stay in one slot of a Redis Cluster.
//
// A record names the source's current public key: the edge finds the record from the key through
// the immutable pair (source ID, workspace ID) it learnt at its first lookup, and a rotated-away
// key no longer matches.

// Field names of the edge records; the edge's script reads these.
const (
	EdgeSourcePublicKey = "pk"      // the current public key
	EdgeSourceKeyHash   = "skh"     // SHA-256 of the private key (HashKey)
	EdgeSourceApp       = "app"     // the app ID
	EdgeSourceEnabled   = "on"      // "1" or "0"
	EdgeSourceOrigins   = "origins" // the allowed origins, each between newlines ("\na\nb\n")
	EdgeWorkspaceSlug   = "slug"
	EdgeWorkspaceAccess = "access" // "1" when HasAccess
	EdgeWorkspaceApps   = "apps"   // the selected app IDs, each between newlines
)

// EdgeSourceKey is the Redis key of a source's edge record.
func (s *Store) EdgeSourceKey(workspaceID, sourceID string) string {
	return s.prefix + "edge:{" + workspaceID + "}:src:" + sourceID
}

// EdgeWorkspaceKey is the Redis key of a workspace's edge record.
func (s *Store) EdgeWorkspaceKey(workspaceID string) string {
	return s.prefix + "edge:{" + workspaceID + "}:ws"
}

// between joins values each between newlines, so that a script finds one with a plain substring
// search for "\n"+value+"\n" (no value holds a newline: origins are normalized, IDs validated).
func between(vs []string) string {
	if len(vs) == 0 {
		return "\n"
	}
	return "\n" + strings.Join(vs, "\n") + "\n"
}

func flagOf(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func edgeSourceFields(src Source) []any {
	return []any{EdgeSourcePublicKey, src.PublicKey, EdgeSourceKeyHash, src.privateKeyHash, EdgeSourceApp, src.AppID,
		EdgeSourceEnabled, flagOf(src.Enabled), EdgeSourceOrigins, between(src.AllowedOrigins)}
}

func edgeWorkspaceFields(w Workspace) []any {
	return []any{EdgeWorkspaceSlug, w.Slug, EdgeWorkspaceAccess, flagOf(w.HasAccess()), EdgeWorkspaceApps, between(w.SelectedAppIDs)}
}

// publishEdgeSource replaces the source's edge record within a write's MULTI.
func (s *Store) publishEdgeSource(ctx context.Context, pipe redis.Pipeliner, src Source) {
	key := s.EdgeSourceKey(src.WorkspaceID, src.ID)
	pipe.Del(ctx, key)
	pipe.HSet(ctx, key, edgeSourceFields(src)...)
	pipe.PExpire(ctx, key, s.CacheTTL)
}

// publishEdgeWorkspace replaces the workspace's edge record within a write's MULTI.
func (s *Store) publishEdgeWorkspace(ctx context.Context, pipe redis.Pipeliner, w Workspace) {
	key := s.EdgeWorkspaceKey(w.ID)
	pipe.Del(ctx, key)
	pipe.HSet(ctx, key, edgeWorkspaceFields(w)...)
	pipe.PExpire(ctx, key, s.CacheTTL)
}

// fillEdgeScript creates each record that is absent; one that exists was written by a write (or a
// fill) at least as new as the caller's read, so it is left alone (the SETNX rule of the JSON caches).
// ARGV: TTL in ms, the number of the source's field/value arguments, then the source's and the
// workspace's field/value pairs.
var fillEdgeScript = redis.NewScript(`
local n = tonumber(ARGV[2])
if redis.call("EXISTS", KEYS[1]) == 0 then
  redis.call("HSET", KEYS[1], unpack(ARGV, 3, 2 + n))
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
if redis.call("EXISTS", KEYS[2]) == 0 then
  redis.call("HSET", KEYS[2], unpack(ARGV, 3 + n, #ARGV))
  redis.call("PEXPIRE", KEYS[2], ARGV[1])
end
return 0`)

// FillEdge creates the edge records of a source and its workspace, as SourceWithWorkspace or
// AuthenticateServerKey just resolved them, where they are absent. The edge calls it after a lookup
// its script could not serve from the records.
func (s *Store) FillEdge(ctx context.Context, src Source, w Workspace) error {
	if src.WorkspaceID != w.ID {
		return fmt.Errorf("edge records: source %s is not of workspace %s", src.ID, w.ID)
	}
	sf, wf := edgeSourceFields(src), edgeWorkspaceFields(w)
	args := make([]any, 0, 2+len(sf)+len(wf))
	args = append(args, s.CacheTTL.Milliseconds(), len(sf))
	args = append(append(args, sf...), wf...)
	if err := fillEdgeScript.Run(ctx, s.rdb, []string{s.EdgeSourceKey(w.ID, src.ID), s.EdgeWorkspaceKey(w.ID)}, args...).Err(); err != nil {
		return fmt.Errorf("edge records: %w", err)
	}
	return nil
}
