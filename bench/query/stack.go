package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// The bench stack's addresses (STACK_NAME=bench deploy/local/stack up); the REVTRACK_* variables that
// `deploy/local/stack env` prints override them.
const (
	defaultKafka      = "127.0.0.1:39092"
	defaultClickHouse = "127.0.0.1:39000"
	defaultRedis      = "127.0.0.1:36379"
)

// stack is the bench stack as revtrack sees it. The stack holds one data set and nothing else, so
// revtrack runs with its default database, topic names, consumer groups and Redis prefix: an
// operator can point `revtrack all` or the admin commands at the bench stack (`eval "$(STACK_NAME=bench
// deploy/local/stack env)"`) and look at the loaded data without any other flag.
type stack struct {
	brokers []string
	ch      clickhousex.Config
	redis   redisx.Config
	groups  string // consumer-group prefix

	conn driver.Conn // the revtrack database, for counts
	rdb  redis.UniversalClient

	revtrack benchkit.Process // the in-process revtrack command, when one runs
	// partnerURL is the fake partner API's address while a load runs (the operator's setting).
	partnerURL string
}

func newStack() *stack {
	s := &stack{brokers: strings.Split(benchkit.Env("REVTRACK_KAFKA_BROKERS", defaultKafka), ","), groups: "revtrack",
		revtrack: benchkit.Process{Logs: benchkit.NewCapped(1 << 20)}}
	s.ch = clickhousex.DefaultConfig()
	s.ch.Addr = benchkit.Env("REVTRACK_CLICKHOUSE_ADDR", defaultClickHouse)
	s.ch.Username = benchkit.Env("REVTRACK_CLICKHOUSE_USERNAME", s.ch.Username)
	s.ch.Password = benchkit.Env("REVTRACK_CLICKHOUSE_PASSWORD", "")
	s.ch.ReadTimeout = 5 * time.Minute // counts over millions of rows on a busy two-core machine
	s.redis = redisx.DefaultConfig()
	s.redis.Addr = benchkit.Env("REVTRACK_REDIS_ADDR", defaultRedis)
	return s
}

// flags are the connection flags every revtrack command of the benchmark gets.
func (s *stack) flags() []string {
	return []string{"--kafka-brokers", strings.Join(s.brokers, ","), "--clickhouse-addr", s.ch.Addr,
		"--clickhouse-database", s.ch.Database, "--redis-addr", s.redis.Addr, "--redis-key-prefix", s.redis.KeyPrefix,
		"--process-group-prefix", s.groups, "--kafka-topic-suffix", "", "--log-level", "warn",
		// A local bench: the published key, the fakes on loopback, and no reporting cost limits
		// (the benchmark measures the computation, including forced recomputation).
		"--allow-development-encryption-key", "--egress-allow-private-networks", "--partner-api-base-url", s.partnerBaseURL(),
		"--query-budget", "1000000000", "--query-budget-refill-per-minute", "1000000000", "--query-no-cache-budget", "1000000000",
		"--query-no-cache-refill-per-hour", "1000000000",
		"--query-max-concurrent-computations", "64"}
}

func (s *stack) partnerBaseURL() string {
	if s.partnerURL == "" {
		return "http://127.0.0.1:1" // no load running: nothing syncs
	}
	return s.partnerURL
}

// open connects the benchmark's own ClickHouse and Redis clients.
func (s *stack) open(ctx context.Context) error {
	var err error
	if s.rdb == nil {
		if s.rdb, err = redisx.Open(ctx, s.redis); err != nil {
			return err
		}
	}
	if s.conn == nil {
		s.conn, err = clickhousex.Open(ctx, s.ch)
	}
	return err
}

func (s *stack) close() {
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
	if s.rdb != nil {
		_ = s.rdb.Close()
		s.rdb = nil
	}
}

// databaseExists reports whether the revtrack database is there (a fresh stack has none).
func (s *stack) databaseExists(ctx context.Context) (bool, error) {
	srv, err := clickhousex.OpenServer(ctx, s.ch)
	if err != nil {
		return false, err
	}
	defer srv.Close()
	var n uint64
	err = srv.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name = ?", s.ch.Database).Scan(&n)
	return n > 0, err
}

// reset removes everything revtrack keeps on the bench stack: the database, the topics, the
// consumer groups and the Redis keys, so a load starts from nothing.
func (s *stack) reset(ctx context.Context) error {
	s.close()
	srv, err := clickhousex.OpenServer(ctx, s.ch)
	if err != nil {
		return err
	}
	err = srv.Exec(ctx, "DROP DATABASE IF EXISTS "+s.ch.Database)
	_ = srv.Close()
	if err != nil {
		return fmt.Errorf("drop database: %w", err)
	}
	if err := s.resetKafka(ctx); err != nil {
		return err
	}
	rdb, err := redisx.Open(ctx, s.redis)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return benchkit.DeleteKeys(ctx, rdb, s.redis.KeyPrefix)
}

func (s *stack) resetKafka(ctx context.Context) error {
	adm, err := benchkit.Admin(s.brokers)
	if err != nil {
		return err
	}
	defer adm.Close()
	if err := benchkit.DeleteGroups(ctx, adm, s.groups); err != nil {
		return err
	}
	topics := benchkit.TopicNames("")
	if err := benchkit.DeleteTopics(ctx, adm, topics); err != nil {
		return err
	}
	// Deletion is asynchronous; creating a topic that is still being deleted fails.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		md, err := adm.ListTopics(ctx, topics...)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		left := 0
		for _, t := range md {
			if t.Err == nil {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d topics still exist 2 minutes after their deletion", left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// start runs `revtrack <command>` (all for the load, query for the latency runs) in this process on
// a free loopback port and waits until /readyz answers 200.
func (s *stack) start(ctx context.Context, command string, extra ...string) error {
	return s.revtrack.Start(ctx, command, append(s.flags(), extra...), 2*time.Minute)
}

// stop ends the running revtrack command (drain, commit, flush).
func (s *stack) stop() error { return s.revtrack.Stop(time.Minute) }

// admin runs one `revtrack admin …` command in this process, as an operator would from a shell, and
// returns what it printed. Migrations already ran when `revtrack all` started.
func (s *stack) admin(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	logs := benchkit.NewCapped(64 << 10)
	full := append(append([]string{"admin"}, args...), s.flags()...)
	full = append(full, "--auto-migrate=false")
	if code := cli.Execute(ctx, full, &out, logs); code != 0 {
		return out.String(), fmt.Errorf("revtrack admin %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(logs.String()))
	}
	return out.String(), nil
}

// adminJSON runs an admin command and decodes the JSON it printed.
func (s *stack) adminJSON(ctx context.Context, v any, args ...string) error {
	out, err := s.admin(ctx, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("revtrack admin %s printed %q: %w", strings.Join(args, " "), out, err)
	}
	return nil
}
