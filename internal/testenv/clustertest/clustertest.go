// Package clustertest migrates a test's own database on the local ClickHouse cluster, for the
// packages' cluster tests (make test-cluster). It is apart from internal/testenv because it needs
// the schemas package, whose own tests use internal/testenv.
package clustertest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/schemas"
)

// NoLock is a migration lock that never waits: the test's database is its own.
type NoLock struct{}

// Lock implements schemas.Locker.
func (NoLock) Lock(context.Context, string, time.Duration) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}

// Migrate applies every migration to cfg's database on cfg.Cluster (testenv.ClusterClickHouse) and
// drops the database on every node when the test ends.
func Migrate(t testing.TB, ctx context.Context, cfg clickhousex.Config) {
	t.Helper()
	srv, err := clickhousex.OpenServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Exec(context.Background(), "DROP DATABASE IF EXISTS "+cfg.Database+" ON CLUSTER "+cfg.Cluster)
		_ = srv.Close()
	})
	open := func(ctx context.Context, addr string) (driver.Conn, error) {
		c := cfg
		c.Addr = addr
		return clickhousex.Open(ctx, c)
	}
	m := &schemas.Migrator{Server: srv, Database: cfg.Database, Cluster: cfg.Cluster, Locker: NoLock{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB: func(ctx context.Context) (driver.Conn, error) {
			conn, err := open(ctx, cfg.Addr)
			if err == nil {
				t.Cleanup(func() { _ = conn.Close() })
			}
			return conn, err
		},
		Node: open, // the migrator closes these
	}
	start := time.Now()
	if _, err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("migrated the cluster in %s", time.Since(start).Round(time.Millisecond))
}
