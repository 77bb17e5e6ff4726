// Package rediscluster runs the Redis paths of the edge, the control plane, the console sessions,
// the query budget and the locks on a real Redis Cluster, where a script, a MULTI or a multi-key
// command whose keys are in several slots fails (CROSSSLOT), as does a script that reads a key it
// did not declare. The ordinary test stack holds the same rule through redisx.SlotChecked, which
// cannot see undeclared keys; this package sees everything.
//
// It runs when REVTRACK_REDIS_CLUSTER=true (with REVTRACK_REDIS_ADDR listing the cluster's nodes,
// as `deploy/local/stack env --cluster` prints them) and is skipped otherwise.
package rediscluster

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// onCluster skips the test unless the test Redis is a cluster, and returns its client.
func onCluster(t *testing.T) (*redis.ClusterClient, redisx.Config) {
	t.Helper()
	if on, _ := strconv.ParseBool(os.Getenv("REVTRACK_REDIS_CLUSTER")); !on {
		t.Skip("REVTRACK_REDIS_CLUSTER is not true: these tests need a Redis Cluster " +
			"(deploy/local/stack up --cluster, then eval \"$(deploy/local/stack env --cluster)\")")
	}
	rdb, rc := testenv.Redis(t)
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("REVTRACK_REDIS_CLUSTER=true but the client is a %T", rdb)
	}
	var primaries int
	if err := cc.ForEachMaster(testenv.Ctx(t), func(context.Context, *redis.Client) error { primaries++; return nil }); err != nil {
		t.Fatal(err)
	}
	if primaries < 2 {
		t.Fatalf("the cluster has %d primary: every slot on one node proves nothing", primaries)
	}
	return cc, rc
}

// The cluster refuses what the slot rule forbids: these tests would pass on anything otherwise.
func TestClusterRefusesCrossSlot(t *testing.T) {
	cc, rc := onCluster(t)
	ctx := testenv.Ctx(t)
	a, b := rc.KeyPrefix+"a", rc.KeyPrefix+"b"
	if redisx.Slot(a) == redisx.Slot(b) {
		t.Fatalf("%s and %s share a slot", a, b)
	}
	_, err := cc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, a, 1, 0)
		p.Set(ctx, b, 1, 0)
		return nil
	})
	if err == nil {
		t.Fatal("a MULTI over two slots was accepted")
	}
	if err := redis.NewScript(`return redis.call("SET", KEYS[1], 1) and redis.call("SET", KEYS[2], 1)`).
		Run(ctx, cc, []string{a, b}).Err(); err == nil {
		t.Fatal("a script over two slots was accepted")
	}
}
