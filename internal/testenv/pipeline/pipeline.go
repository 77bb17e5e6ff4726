// Package pipeline gives integration tests the schema-level fixtures they share: a migrated
// ClickHouse database, the declared Kafka topics, and a seeded workspace with a tracking source. It is
// apart from testenv because it imports the schema packages, which testenv's own users include.
package pipeline

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

// Quiet discards logs.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// DB is a fresh, migrated database with the test's Redis.
type DB struct {
	CH     clickhousex.Config
	Conn   driver.Conn
	Redis  redis.UniversalClient
	RedisC redisx.Config
}

// Migrated creates a database for this test, applies every migration, and opens a connection; all
// of it is dropped or closed when the test ends.
func Migrated(t testing.TB) DB {
	t.Helper()
	ctx := testenv.Ctx(t)
	chc := testenv.ClickHouseConfig(t)
	rdb, rc := testenv.Redis(t)
	if _, err := bootstrap.Migrate(ctx, chc, rdb, rc.KeyPrefix, Quiet); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return DB{CH: chc, Conn: conn, Redis: rdb, RedisC: rc}
}

// Topics creates every declared topic under a suffix unique to the test and returns the config and
// a producer; the topics are deleted when the test ends.
func Topics(t testing.TB) (kafkax.Config, *kgo.Client) {
	t.Helper()
	kc := testenv.KafkaConfig(t)
	p, err := kafkax.NewProducer(kc, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := bootstrap.EnsureTopics(testenv.Ctx(t), p, kc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var names []string
		for _, s := range bootstrap.TopicSpecs() {
			names = append(names, kc.Topic(s.Name))
		}
		_, _ = kadm.NewClient(p).DeleteTopics(context.Background(), names...)
	})
	return kc, p
}

// Tenant is the seeded workspace "acme" with app "app-1" selected and one tracking source.
type Tenant struct {
	Store      *controlplane.Store
	Source     controlplane.Source
	PrivateKey string
}

// Seed creates the tenant in db; the source allows origins.
func Seed(t testing.TB, db DB, origins ...string) Tenant {
	t.Helper()
	ctx := testenv.Ctx(t)
	s := controlplane.NewStore(db.Conn, db.Redis, db.RedisC.KeyPrefix)
	if _, err := s.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := s.PutApp(ctx, "test", controlplane.App{ID: "app-1", Name: "App"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSelectedApps(ctx, "test", "acme", []string{"app-1"}); err != nil {
		t.Fatal(err)
	}
	src, sk, err := s.CreateSource(ctx, "test", "acme", "app-1", "site", origins)
	if err != nil {
		t.Fatal(err)
	}
	return Tenant{Store: s, Source: src, PrivateKey: sk}
}
