// Package bootstrap prepares the shared infrastructure before components start: it applies the
// ClickHouse migrations under a Redis lock and creates the Kafka topics.
package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// Migrate applies pending migrations to the configured database. It is safe to call from several
// processes at once: the Redis lock serialises them and each re-reads what was applied.
func Migrate(ctx context.Context, ch clickhousex.Config, rdb redis.UniversalClient, prefix string, log *slog.Logger) (schemas.Result, error) {
	srv, err := clickhousex.OpenServer(ctx, ch)
	if err != nil {
		return schemas.Result{}, err
	}
	defer srv.Close()
	var db driver.Conn
	m := &schemas.Migrator{
		Server:   srv,
		Database: ch.Database,
		Locker:   redisx.Locker{Client: rdb, Prefix: prefix},
		Log:      log,
		Cluster:  ch.Cluster,
		Node: func(ctx context.Context, addr string) (driver.Conn, error) {
			// A node's own tables: its connection needs none of the cluster's session checks.
			c := ch
			c.Addr, c.Cluster = addr, ""
			return clickhousex.Open(ctx, c)
		},
		DB: func(ctx context.Context) (driver.Conn, error) {
			var err error
			db, err = clickhousex.Open(ctx, ch)
			return db, err
		},
	}
	res, err := m.Run(ctx)
	if err == nil {
		settleCopies(ctx, db, m.Locker, ch.Database, log)
	}
	if db != nil {
		_ = db.Close()
	}
	return res, err
}

// settleCopies fills or records the copies that materialized views fill (reportingbackfill.Auto),
// one process at a time. A failure is logged, not returned: readers cope with an incomplete copy,
// and `revtrack admin reporting backfill` finishes the work.
func settleCopies(ctx context.Context, db driver.Conn, l schemas.Locker, database string, log *slog.Logger) {
	unlock, err := l.Lock(ctx, "copy-backfill:"+database, 10*time.Minute)
	if err == nil {
		defer func() { _ = unlock(context.WithoutCancel(ctx)) }()
		err = reportingbackfill.Auto(ctx, db, log)
	}
	if err != nil {
		log.Error("copies not settled after the migrations: run `revtrack admin reporting backfill`", "err", err)
	}
}

// TopicSpecs converts the declared topics for the admin client.
func TopicSpecs() []kafkax.TopicSpec {
	var out []kafkax.TopicSpec
	for _, t := range schemas.Topics() {
		ms := int64(-1)
		if t.Retention > 0 {
			ms = t.Retention.Milliseconds()
		}
		out = append(out, kafkax.TopicSpec{Name: t.Name, Partitions: t.Partitions, RetentionMs: ms, Compact: t.Compact})
	}
	return out
}

// EnsureTopics creates every declared topic that does not exist yet.
func EnsureTopics(ctx context.Context, cl *kgo.Client, c kafkax.Config) error {
	return kafkax.EnsureTopics(ctx, cl, c, TopicSpecs())
}
