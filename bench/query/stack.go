package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/cli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

// The bench stack's addresses (STACK_NAME=bench deploy/local/stack up); the REVTRACK_* variables that
// `deploy/local/stack env` prints override them.
const (
	defaultKafka      = "127.0.0.1:39092"
	defaultClickHouse = "127.0.0.1:39000"
	defaultRedis      = "127.0.0.1:36379"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

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
	rdb  *redis.Client

	// the in-process revtrack command, when one runs
	baseURL string
	cancel  context.CancelFunc
	done    chan int
	logs    *capped
}

func newStack() *stack {
	s := &stack{brokers: strings.Split(env("REVTRACK_KAFKA_BROKERS", defaultKafka), ","), groups: "revtrack", logs: &capped{max: 1 << 20}}
	s.ch = clickhousex.DefaultConfig()
	s.ch.Addr = env("REVTRACK_CLICKHOUSE_ADDR", defaultClickHouse)
	s.ch.ReadTimeout = 5 * time.Minute // counts over millions of rows on a busy two-core machine
	s.redis = redisx.DefaultConfig()
	s.redis.Addr = env("REVTRACK_REDIS_ADDR", defaultRedis)
	return s
}

// flags are the connection flags every revtrack command of the benchmark gets.
func (s *stack) flags() []string {
	return []string{"--kafka-brokers", strings.Join(s.brokers, ","), "--clickhouse-addr", s.ch.Addr,
		"--clickhouse-database", s.ch.Database, "--redis-addr", s.redis.Addr, "--redis-key-prefix", s.redis.KeyPrefix,
		"--process-group-prefix", s.groups, "--kafka-topic-suffix", "", "--log-level", "warn"}
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
	return deleteKeys(ctx, rdb, s.redis.KeyPrefix)
}

func (s *stack) resetKafka(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list consumer groups: %w", err)
	}
	var mine []string
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, s.groups) {
			mine = append(mine, g)
		}
	}
	if len(mine) > 0 {
		if _, err := adm.DeleteGroups(ctx, mine...); err != nil {
			return fmt.Errorf("delete consumer groups: %w", err)
		}
	}
	var topics []string
	for _, t := range schemas.Topics() {
		topics = append(topics, t.Name)
	}
	resps, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil && !strings.Contains(r.Err.Error(), "UNKNOWN_TOPIC") {
			return fmt.Errorf("delete topic %s: %w", r.Topic, r.Err)
		}
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

func deleteKeys(ctx context.Context, rdb *redis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, prefix+"*", 5000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rdb.Unlink(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 5000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	return flush()
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs `revtrack <command>` (all for the load, query for the latency runs) in this process on
// a free loopback port and waits until /readyz answers 200.
func (s *stack) start(ctx context.Context, command string, extra ...string) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	s.baseURL = "http://" + addr
	args := append(append([]string{command, "--http-addr", addr}, s.flags()...), extra...)
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.done = cancel, make(chan int, 1)
	go func() { s.done <- cli.Execute(rctx, args, s.logs, s.logs) }()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case code := <-s.done:
			s.cancel, s.done = nil, nil
			return fmt.Errorf("revtrack %s exited with %d before it was ready:\n%s", command, code, s.logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(s.baseURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("revtrack %s not ready within 2 minutes:\n%s", command, s.logs)
		}
	}
}

// stop ends the running revtrack command (drain, commit, flush).
func (s *stack) stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	defer func() { s.cancel, s.done = nil, nil }()
	select {
	case code := <-s.done:
		if code != 0 {
			return fmt.Errorf("revtrack exited with %d:\n%s", code, s.logs)
		}
		return nil
	case <-time.After(time.Minute):
		return errors.New("revtrack did not stop within a minute")
	}
}

// admin runs one `revtrack admin …` command in this process, as an operator would from a shell, and
// returns what it printed. Migrations already ran when `revtrack all` started.
func (s *stack) admin(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	logs := &capped{max: 64 << 10}
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

// capped keeps the first max bytes of revtrack's log output (warnings and errors only), shown when
// something fails.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
