// Package cluster checks the local cluster shape of the stack (deploy/local/stack up --cluster):
// that what it starts is a cluster, not four, three and three independent servers.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
)

// env returns the cluster's settings, or skips: these tests need `deploy/local/stack up --cluster`
// and its `env --cluster` exported, which no other test target starts.
func env(t *testing.T, names ...string) map[string]string {
	t.Helper()
	if os.Getenv("REVTRACK_CLUSTER_TESTS") != "1" {
		t.Skip("cluster tests are off: run `deploy/local/stack up --cluster`, " +
			"`eval \"$(deploy/local/stack env --cluster)\"` and set REVTRACK_CLUSTER_TESTS=1 (or `make cluster-up` first)")
	}
	m := map[string]string{}
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			t.Fatalf("REVTRACK_CLUSTER_TESTS=1 but %s is empty: export `deploy/local/stack env --cluster`", n)
		}
		m[n] = v
	}
	return m
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// stackNode runs `deploy/local/stack node <action> <name>`.
func stackNode(t *testing.T, action, name string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "deploy", "local", "stack")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script, "node", action, name).CombinedOutput()
	if err != nil {
		t.Fatalf("stack node %s %s: %v\n%s", action, name, err, out)
	}
}

func openClickHouse(t *testing.T, e map[string]string, addr string) driver.Conn {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{addr},
		Auth: clickhouse.Auth{
			Username: e["REVTRACK_CLICKHOUSE_USERNAME"],
			Password: e["REVTRACK_CLICKHOUSE_PASSWORD"],
		},
		DialTimeout: 5 * time.Second,
		ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func count(ctx context.Context, t *testing.T, conn driver.Conn, query string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestClickHouseReplicatedInsertReachesTheOtherReplica: a table created ON CLUSTER exists on the four
// nodes; a row inserted on shard 1 replica 1 shows on shard 1 replica 2 and on no node of shard 2.
func TestClickHouseReplicatedInsertReachesTheOtherReplica(t *testing.T) {
	e := env(t, "REVTRACK_CLICKHOUSE_ADDR", "STACK_CLICKHOUSE_NODES", "REVTRACK_CLICKHOUSE_CLUSTER",
		"REVTRACK_CLICKHOUSE_USERNAME", "REVTRACK_CLICKHOUSE_PASSWORD")
	others := strings.Split(e["STACK_CLICKHOUSE_NODES"], ",")
	if len(others) != 3 {
		t.Fatalf("STACK_CLICKHOUSE_NODES = %q, want the 3 nodes other than shard 1 replica 1", e["STACK_CLICKHOUSE_NODES"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster := e["REVTRACK_CLICKHOUSE_CLUSTER"]
	db := "cluster_test_" + randomSuffix(t)
	s1r1 := openClickHouse(t, e, e["REVTRACK_CLICKHOUSE_ADDR"])
	s1r2, s2r1, s2r2 := openClickHouse(t, e, others[0]), openClickHouse(t, e, others[1]), openClickHouse(t, e, others[2])

	for _, q := range []string{
		fmt.Sprintf("CREATE DATABASE %s ON CLUSTER %s", db, cluster),
		fmt.Sprintf("CREATE TABLE %s.t ON CLUSTER %s (id UInt64, note String) "+
			"ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/%s/t', '{replica}') ORDER BY id", db, cluster, db),
		fmt.Sprintf("CREATE TABLE %s.t_all ON CLUSTER %s AS %s.t ENGINE = Distributed(%s, %s, t, id)", db, cluster, db, cluster, db),
	} {
		if err := s1r1.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_ = s1r1.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s ON CLUSTER %s", db, cluster))
	})

	batch, err := s1r1.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO %s.t (id, note)", db))
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(uint64(7), "written on s1r1"); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for count(ctx, t, s1r2, fmt.Sprintf("SELECT count() FROM %s.t WHERE id = 7", db)) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the row inserted on shard 1 replica 1 did not reach replica 2 within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for name, conn := range map[string]driver.Conn{"s2r1": s2r1, "s2r2": s2r2} {
		if n := count(ctx, t, conn, fmt.Sprintf("SELECT count() FROM %s.t", db)); n != 0 {
			t.Errorf("%s holds %d rows of shard 1's table", name, n)
		}
	}
	// The Distributed table sees the row from a node of the other shard.
	if n := count(ctx, t, s2r2, fmt.Sprintf("SELECT count() FROM %s.t_all", db)); n != 1 {
		t.Errorf("Distributed table on s2r2: %d rows, want 1", n)
	}
}

// TestRedisClusterSpreadsKeysOverTheThreePrimaries: the three addresses form one cluster whose three
// primaries each serve a third of the slots, and keys land on all three.
func TestRedisClusterSpreadsKeysOverTheThreePrimaries(t *testing.T) {
	e := env(t, "REVTRACK_REDIS_ADDR", "REVTRACK_REDIS_CLUSTER")
	if e["REVTRACK_REDIS_CLUSTER"] != "true" {
		t.Fatalf("REVTRACK_REDIS_CLUSTER = %q, want true", e["REVTRACK_REDIS_CLUSTER"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(e["REVTRACK_REDIS_ADDR"], ",")})
	defer rdb.Close()

	slots, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 3 {
		t.Fatalf("%d slot ranges, want 3: %+v", len(slots), slots)
	}
	covered := 0
	for _, s := range slots {
		covered += s.End - s.Start + 1
	}
	if covered != 16384 {
		t.Fatalf("slot ranges cover %d slots, want 16384", covered)
	}

	prefix := "cluster-test:" + randomSuffix(t) + ":"
	for i := 0; i < 60; i++ {
		if err := rdb.Set(ctx, fmt.Sprintf("%s%d", prefix, i), i, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex // ForEachMaster calls the primaries concurrently
	perPrimary := map[string]int{}
	err = rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n := 0
		it := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for it.Next(ctx) {
			n++
			if err := c.Del(ctx, it.Val()).Err(); err != nil {
				return err
			}
		}
		mu.Lock()
		perPrimary[c.Options().Addr] = n
		mu.Unlock()
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range perPrimary {
		total += n
	}
	if len(perPrimary) != 3 || total != 60 {
		t.Fatalf("keys per primary %v, want 60 keys on 3 primaries", perPrimary)
	}
	for addr, n := range perPrimary {
		if n == 0 {
			t.Errorf("primary %s holds none of the 60 keys", addr)
		}
	}
}
