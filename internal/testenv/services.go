package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
)

// The test stack's defaults (STACK_NAME=test deploy/local/stack up); REVTRACK_* variables override
// them, as `make test` sets them from `deploy/local/stack env`.
const (
	defaultKafka      = "127.0.0.1:29092"
	defaultClickHouse = "127.0.0.1:29000"
	defaultRedis      = "127.0.0.1:26379"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ID returns a short random identifier for isolating a test's topics, database and keys.
func ID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Ctx returns a context cancelled when the test ends or after a minute.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// KafkaConfig returns a config whose topics carry a suffix unique to this test. The broker must be
// running: tests never skip for lack of a service.
func KafkaConfig(t testing.TB) kafkax.Config {
	t.Helper()
	c := kafkax.DefaultConfig()
	c.Brokers = strings.Split(env("REVTRACK_KAFKA_BROKERS", defaultKafka), ",")
	c.TopicSuffix = ".t" + ID()
	c.ClientID = "revtrack-test"
	return c
}

// ClickHouseConfig returns a config for a fresh database, dropped when the test ends.
func ClickHouseConfig(t testing.TB) clickhousex.Config {
	t.Helper()
	c := clickhousex.DefaultConfig()
	c.Addr = env("REVTRACK_CLICKHOUSE_ADDR", defaultClickHouse)
	c.Username, c.Password = clickHouseCredentials(t)
	c.Database = "revtrack_t" + ID()
	c.ReadTimeout = 20 * time.Second
	srv, err := clickhousex.OpenServer(Ctx(t), c)
	if err != nil {
		t.Fatalf("ClickHouse is not reachable (start it with `make stack-test`): %v", err)
	}
	t.Cleanup(func() {
		_ = srv.Exec(context.Background(), "DROP DATABASE IF EXISTS "+c.Database)
		dropAnalystAccess(srv, c.Database)
		_ = srv.Close()
	})
	return c
}

// ClickHouse creates the test database and returns a connection to it (no tables).
func ClickHouse(t testing.TB) (clickhousex.Config, driver.Conn) {
	t.Helper()
	c := ClickHouseConfig(t)
	srv, err := clickhousex.OpenServer(Ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Exec(Ctx(t), "CREATE DATABASE IF NOT EXISTS "+c.Database); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhousex.Open(Ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return c, conn
}

// RedisConfig returns a config with a key prefix unique to this test; its keys are deleted at the end.
// REVTRACK_REDIS_CLUSTER=true (deploy/local/stack env --cluster) or REVTRACK_REDIS_MASTER_NAME make it
// a Redis Cluster's or a Sentinel's, as the server's flags do.
func RedisConfig(t testing.TB) redisx.Config {
	t.Helper()
	c := redisx.DefaultConfig()
	c.Addr = env("REVTRACK_REDIS_ADDR", defaultRedis)
	c.Cluster, _ = strconv.ParseBool(env("REVTRACK_REDIS_CLUSTER", "false"))
	c.MasterName = env("REVTRACK_REDIS_MASTER_NAME", "")
	c.KeyPrefix = "revtrack-t" + ID() + ":"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	cl, err := redisx.Open(Ctx(t), c)
	if err != nil {
		t.Fatalf("Redis is not reachable (start it with `make stack-test`): %v", err)
	}
	t.Cleanup(func() {
		_ = redisx.DeleteMatching(context.Background(), cl, c.KeyPrefix+"*")
		_ = cl.Close()
	})
	return c
}

// Redis returns a client and the prefix its keys must carry. On a single Redis the client holds it to
// a Redis Cluster's rules (redisx.SlotChecked: a script, MULTI or multi-key command over several slots
// fails) unless REVTRACK_REDIS_SLOTCHECK=false.
func Redis(t testing.TB) (redis.UniversalClient, redisx.Config) {
	t.Helper()
	c := RedisConfig(t)
	cl, err := redisx.Open(Ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	if one, ok := cl.(*redis.Client); ok && c.MasterName == "" {
		if check, _ := strconv.ParseBool(env("REVTRACK_REDIS_SLOTCHECK", "true")); check {
			return redisx.NewSlotChecked(one), c
		}
	}
	return cl, c
}
