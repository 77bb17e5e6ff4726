package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/budget"
)

// TestClusterDedupAndRateLimit: the reservation, its release and confirmation, and the rate window,
// for workspaces whose hash tags spread over the cluster's nodes.
func TestClusterDedupAndRateLimit(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	dedup := &ingest.RedisDeduper{Client: cc, Prefix: rc.KeyPrefix, TTL: time.Hour, PendingTTL: 10 * time.Second}
	limiter := &ingest.RedisLimiter{Client: cc, Prefix: rc.KeyPrefix}
	admitter := &ingest.RedisAdmitter{Limiter: limiter, Deduper: dedup}
	limit := ingest.Limit{N: 2, Window: time.Minute}
	slots := map[int]bool{}
	for i := range 8 {
		scope := fmt.Sprintf("{ws-%d}:src", i) // as the edge scopes them: the workspace ID as hash tag
		slots[redisx.Slot(rc.KeyPrefix+"dedup:"+scope)] = true
		ok, _, err := admitter.Admit(ctx, "srv:"+scope, limit, scope, "e-1", "t-1")
		if err != nil || !ok {
			t.Fatalf("%s: admit: %v %v", scope, ok, err)
		}
		if err := dedup.Release(ctx, scope, "e-1", "t-1"); err != nil {
			t.Fatal(err)
		}
		ok, _, err = admitter.Admit(ctx, "srv:"+scope, limit, scope, "e-1", "t-2") // released: new again
		if err != nil || !ok {
			t.Fatalf("%s: admit after release: %v %v", scope, ok, err)
		}
		if err := dedup.Confirm(ctx, scope, "e-1"); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := admitter.Admit(ctx, "srv:"+scope, limit, scope, "e-2", "t-3"); err != nil || ok {
			t.Fatalf("%s: third request within a limit of 2: %v %v", scope, ok, err)
		}
		if ok, err := limiter.Allow(ctx, "web:"+scope, limit); err != nil || !ok {
			t.Fatalf("%s: browser limit: %v %v", scope, ok, err)
		}
	}
	if len(slots) < 2 {
		t.Fatalf("the scopes fell in %d slot", len(slots))
	}
}

// TestClusterLocks: the lease (take, extend, release, hold), the migration lock and the sync locks.
func TestClusterLocks(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	key := rc.KeyPrefix + "lease-test"
	a, err := redisx.TryAcquire(ctx, cc, key, time.Second)
	if err != nil || a == nil {
		t.Fatalf("acquire: %v %v", a, err)
	}
	if b, err := redisx.TryAcquire(ctx, cc, key, time.Second); err != nil || b != nil {
		t.Fatalf("second acquire: %v %v", b, err)
	}
	if ok, err := a.Extend(ctx); err != nil || !ok {
		t.Fatalf("extend: %v %v", ok, err)
	}
	held, stop := a.Hold(ctx)
	time.Sleep(700 * time.Millisecond) // two renewals
	if held.Err() != nil {
		t.Fatalf("held lease lost: %v", context.Cause(held))
	}
	stop()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}

	unlock, err := redisx.Locker{Client: cc, Prefix: rc.KeyPrefix}.Lock(ctx, "migrate", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := unlock(ctx); err != nil {
		t.Fatal(err)
	}

	locks := &platformsync.Locks{Client: cc, Prefix: rc.KeyPrefix}
	l, err := locks.Acquire(ctx, "ws-1", "app-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locks.Acquire(ctx, "ws-1", "app-1"); !errors.Is(err, platformsync.ErrAlreadyRunning) {
		t.Fatalf("second sync lock: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClusterSessions: console sessions (the session and its user's index are in two slots) and the
// sign-in throttle (two counters in two slots).
func TestClusterSessions(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	cfg := authn.DefaultSessionConfig()
	s, err := authn.NewSessions(cc, rc.KeyPrefix, cfg, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 4 {
		id, _, err := s.Create(ctx, "user-1")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	kept, err := s.Lookup(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.End(ctx, mustLookup(t, s, ids[1])); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, ids[1]); !errors.Is(err, authn.ErrNoSession) {
		t.Fatalf("ended session: %v", err)
	}
	if n, err := s.EndUser(ctx, "user-1", kept.Hash); err != nil || n != 2 {
		t.Fatalf("EndUser: %d %v, want 2", n, err)
	}
	for i, id := range ids {
		_, err := s.Lookup(ctx, id)
		if (i == 0) != (err == nil) {
			t.Errorf("session %d after EndUser: %v", i, err)
		}
	}

	th := authn.NewThrottle(cc, rc.KeyPrefix, cfg)
	for range cfg.MaxFailuresPerAccount {
		if err := th.Fail(ctx, "a@example.com", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	var throttled *authn.ThrottledError
	if err := th.Check(ctx, "a@example.com", "192.0.2.2"); !errors.As(err, &throttled) {
		t.Fatalf("account at its limit: %v", err)
	}
	if err := th.Succeed(ctx, "a@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := th.Check(ctx, "a@example.com", "192.0.2.1"); err != nil {
		t.Fatalf("after a success: %v", err)
	}
}

func mustLookup(t *testing.T, s *authn.Sessions, id string) authn.Session {
	t.Helper()
	sess, err := s.Lookup(testenv.Ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// TestClusterBudget: the query budget's token bucket.
func TestClusterBudget(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	b := &budget.RedisBuckets{Client: cc, Prefix: rc.KeyPrefix}
	bucket := budget.Bucket{Size: 2, PerSecond: 0.01}
	for i := range 3 {
		d, err := b.Take(ctx, "key-1", bucket, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.OK != (i < 2) {
			t.Fatalf("take %d: %+v", i, d)
		}
	}
}

// TestClusterHelpers: MGet and DeleteMatching over keys of every node.
func TestClusterHelpers(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("%shelper:%d", rc.KeyPrefix, i)
		keys = append(keys, k)
		if i%2 == 0 {
			if err := cc.Set(ctx, k, i, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	vals, err := redisx.MGet(ctx, cc, keys...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if want := fmt.Sprint(i); (i%2 == 0) != (v == want) || (i%2 == 1 && v != nil) {
			t.Errorf("key %d: %v", i, v)
		}
	}
	if err := redisx.DeleteMatching(ctx, cc, rc.KeyPrefix+"helper:*"); err != nil {
		t.Fatal(err)
	}
	if n, err := cc.Exists(ctx, keys[0]).Result(); err != nil || n != 0 {
		t.Fatalf("after DeleteMatching: %d %v", n, err)
	}
}
