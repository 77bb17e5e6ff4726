package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// The test stack's addresses (STACK_NAME=test deploy/local/stack up); the REVTRACK_* variables that
// `deploy/local/stack env` prints override them.
const (
	defaultKafka      = "127.0.0.1:29092"
	defaultClickHouse = "127.0.0.1:29000"
	defaultRedis      = "127.0.0.1:26379"

	benchOrigin = "https://bench.example"
	benchSlug   = "bench"
	benchAppID  = "bench-app"
)

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stack is one revtrack process (`revtrack all`, in-process) on its own ClickHouse database, topic
// suffix, consumer groups and Redis key prefix, so the benchmark shares the test stack with anything
// else running on it without seeing or disturbing it.
type stack struct {
	id       string
	brokers  []string
	suffix   string
	ch       clickhousex.Config
	redis    redisx.Config
	groupPfx string

	revtrack benchkit.Process // all, or ingest alone

	conn driver.Conn // the bench database, for seeding and freshness polls
	rdb  *redis.Client

	src     controlplane.Source
	private string
}

func newStack() *stack {
	id := randomID()
	s := &stack{id: id, brokers: strings.Split(benchkit.Env("REVTRACK_KAFKA_BROKERS", defaultKafka), ","),
		suffix: ".bench" + id, groupPfx: "revtrack-bench" + id, revtrack: benchkit.Process{Logs: benchkit.NewCapped(1 << 20)}}
	s.ch = clickhousex.DefaultConfig()
	s.ch.Addr = benchkit.Env("REVTRACK_CLICKHOUSE_ADDR", defaultClickHouse)
	s.ch.Username = benchkit.Env("REVTRACK_CLICKHOUSE_USERNAME", s.ch.Username)
	s.ch.Password = benchkit.Env("REVTRACK_CLICKHOUSE_PASSWORD", "")
	s.ch.Database = "revtrack_bench" + id
	s.ch.ReadTimeout = 20 * time.Second
	s.redis = redisx.DefaultConfig()
	s.redis.Addr = benchkit.Env("REVTRACK_REDIS_ADDR", defaultRedis)
	s.redis.KeyPrefix = "revtrack-bench" + id + ":"
	return s
}

// start runs `revtrack <command>` (all, or ingest alone) in this process and waits until /readyz answers 200. Rate limits are set
// far above what one machine can send, so they never answer 429 (their Redis round trip still runs).
func (s *stack) start(ctx context.Context, command string, extra []string) error {
	args := append([]string{"--log-level", "warn",
		"--kafka-brokers", strings.Join(s.brokers, ","), "--kafka-topic-suffix", s.suffix,
		"--clickhouse-addr", s.ch.Addr, "--clickhouse-database", s.ch.Database,
		"--redis-addr", s.redis.Addr, "--redis-key-prefix", s.redis.KeyPrefix,
		"--process-group-prefix", s.groupPfx,
		"--ingest-server-events-per-minute", "1000000000",
		"--ingest-browser-requests-per-minute", "1000000000",
		// A local bench: the published key and the Google fake on loopback.
		"--allow-development-encryption-key", "--egress-allow-private-networks",
	}, extra...)
	if err := s.revtrack.Start(ctx, command, args, 90*time.Second); err != nil {
		return err
	}
	var err error
	if s.conn, err = clickhousex.Open(ctx, s.ch); err != nil {
		return err
	}
	s.rdb, err = redisx.Open(ctx, s.redis)
	return err
}

// seed creates what a publisher has before sending events: a workspace with an active subscription,
// an app it selected, and a tracking source for that app that allows the bench origin.
func (s *stack) seed(ctx context.Context) error {
	st := controlplane.NewStore(s.conn, s.rdb, s.redis.KeyPrefix)
	if _, err := st.CreateWorkspace(ctx, "bench", benchSlug, "Bench", controlplane.StatusActive); err != nil {
		return fmt.Errorf("seed workspace: %w", err)
	}
	if err := st.PutApp(ctx, "bench", controlplane.App{ID: benchAppID, PlatformAppID: "9001", Name: "Bench App"}); err != nil {
		return fmt.Errorf("seed app: %w", err)
	}
	if _, err := st.SetSelectedApps(ctx, "bench", benchSlug, []string{benchAppID}); err != nil {
		return fmt.Errorf("seed selected apps: %w", err)
	}
	src, private, err := st.CreateSource(ctx, "bench", benchSlug, benchAppID, "bench", []string{benchOrigin})
	if err != nil {
		return fmt.Errorf("seed tracking source: %w", err)
	}
	s.src, s.private = src, private
	return nil
}

// countEvents is the number of distinct events of the bench source in a table.
func (s *stack) countEvents(ctx context.Context, table string) (uint64, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+table+" WHERE source_id = ?", s.src.ID).Scan(&n)
	return n, err
}

// waitLanded waits until table holds at least want events of the bench source; it returns how long
// that took and the count it saw last.
func (s *stack) waitLanded(ctx context.Context, table string, want uint64, timeout time.Duration) (time.Duration, uint64, error) {
	start := time.Now()
	var n uint64
	for {
		var err error
		if n, err = s.countEvents(ctx, table); err != nil {
			return 0, n, err
		}
		if n >= want {
			return time.Since(start), n, nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), n, fmt.Errorf("%s holds %d of %d accepted events after %s", table, n, want, timeout)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), n, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// metric reads one unlabelled sample (e.g. a histogram's _sum or _count) from the edge's /metrics.
func (s *stack) metric(name string) float64 {
	resp, err := http.Get(s.revtrack.BaseURL + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	for l := range strings.Lines(buf.String()) {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			_, _ = fmt.Sscan(strings.TrimSpace(v), &f)
			return f
		}
	}
	return 0
}

// stop ends revtrack (drain, commit, flush) and removes everything the run created: the database,
// the topics, the consumer groups and the Redis keys.
func (s *stack) stop() error {
	errs := []error{s.revtrack.Stop(45 * time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if srv, err := clickhousex.OpenServer(ctx, s.ch); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, srv.Exec(ctx, "DROP DATABASE IF EXISTS "+s.ch.Database))
		_ = srv.Close()
	}
	errs = append(errs, s.deleteKafka(ctx))
	if s.rdb == nil {
		var err error
		if s.rdb, err = redisx.Open(ctx, s.redis); err != nil {
			errs = append(errs, err)
		}
	}
	if s.rdb != nil {
		errs = append(errs, benchkit.DeleteKeys(ctx, s.rdb, s.redis.KeyPrefix))
		_ = s.rdb.Close()
	}
	return errors.Join(errs...)
}

func (s *stack) deleteKafka(ctx context.Context) error {
	adm, err := benchkit.Admin(s.brokers)
	if err != nil {
		return err
	}
	defer adm.Close()
	return errors.Join(benchkit.DeleteGroups(ctx, adm, s.groupPfx), benchkit.DeleteTopics(ctx, adm, benchkit.TopicNames(s.suffix)))
}
