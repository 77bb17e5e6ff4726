package benchkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// The test stack's addresses (STACK_NAME=test deploy/local/stack up); the REVTRACK_* variables that
// `deploy/local/stack env` prints override them.
const (
	testKafka      = "127.0.0.1:29092"
	testClickHouse = "127.0.0.1:29000"
	testRedis      = "127.0.0.1:26379"
)

// What a sandbox seeds: the publisher whose events the ingest and upload benchmarks send.
const (
	Origin   = "https://bench.example" // the tracking source's allowed origin
	TeamSlug = "bench"                 // the workspace's slug
	AppID    = "bench-app"             // the app the workspace selected
)

// randomID is 12 hex digits, the suffix that keeps one run's names apart from every other's.
func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Sandbox is one revtrack command (in-process) on its own ClickHouse database, topic suffix,
// consumer groups and Redis key prefix of the test stack, so a benchmark shares the test stack with
// anything else running on it without seeing or disturbing it. Stop removes all of them.
type Sandbox struct {
	ID          string
	Brokers     []string
	Suffix      string // --kafka-topic-suffix
	CH          clickhousex.Config
	Redis       redisx.Config
	GroupPrefix string // --process-group-prefix

	Revtrack Process // all, or ingest alone

	Conn driver.Conn           // the sandbox's database, for seeding and polls; set by Start
	RDB  redis.UniversalClient // set by Start

	Source  controlplane.Source // set by Seed
	Private string              // the source's private key; set by Seed
}

// NewSandbox names a new sandbox on the test stack; nothing exists until Start.
func NewSandbox() *Sandbox {
	id := randomID()
	s := &Sandbox{ID: id, Brokers: strings.Split(Env("REVTRACK_KAFKA_BROKERS", testKafka), ","),
		Suffix: ".bench" + id, GroupPrefix: "revtrack-bench" + id, Revtrack: Process{Logs: NewCapped(1 << 20)}}
	s.CH = clickhousex.DefaultConfig()
	s.CH.Addr = Env("REVTRACK_CLICKHOUSE_ADDR", testClickHouse)
	s.CH.Username = Env("REVTRACK_CLICKHOUSE_USERNAME", s.CH.Username)
	s.CH.Password = Env("REVTRACK_CLICKHOUSE_PASSWORD", "")
	s.CH.Database = "revtrack_bench" + id
	s.CH.ReadTimeout = 20 * time.Second
	s.Redis = redisx.DefaultConfig()
	s.Redis.Addr = Env("REVTRACK_REDIS_ADDR", testRedis)
	s.Redis.KeyPrefix = "revtrack-bench" + id + ":"
	return s
}

// Start runs `revtrack <command>` (all, or ingest alone) in this process and waits until /readyz
// answers 200. Rate limits are set far above what one machine can send, so they never answer 429
// (their Redis round trip still runs).
func (s *Sandbox) Start(ctx context.Context, command string, extra []string) error {
	args := append([]string{"--log-level", "warn",
		"--kafka-brokers", strings.Join(s.Brokers, ","), "--kafka-topic-suffix", s.Suffix,
		"--clickhouse-addr", s.CH.Addr, "--clickhouse-database", s.CH.Database,
		"--redis-addr", s.Redis.Addr, "--redis-key-prefix", s.Redis.KeyPrefix,
		"--process-group-prefix", s.GroupPrefix,
		"--ingest-server-events-per-minute", "1000000000",
		"--ingest-browser-requests-per-minute", "1000000000",
		// A local bench: the published key and the Google fake on loopback.
		"--allow-development-encryption-key", "--egress-allow-private-networks",
	}, extra...)
	if err := s.Revtrack.Start(ctx, command, args, 90*time.Second); err != nil {
		return err
	}
	var err error
	if s.Conn, err = clickhousex.Open(ctx, s.CH); err != nil {
		return err
	}
	s.RDB, err = redisx.Open(ctx, s.Redis)
	return err
}

// Seed creates what a publisher has before sending events: a workspace with an active subscription,
// an app it selected, and a tracking source for that app that allows Origin.
func (s *Sandbox) Seed(ctx context.Context) error {
	st := controlplane.NewStore(s.Conn, s.RDB, s.Redis.KeyPrefix)
	if _, err := st.CreateWorkspace(ctx, "bench", TeamSlug, "Bench", controlplane.StatusActive); err != nil {
		return fmt.Errorf("seed workspace: %w", err)
	}
	if err := st.PutApp(ctx, "bench", controlplane.App{ID: AppID, PlatformAppID: "9001", Name: "Bench App"}); err != nil {
		return fmt.Errorf("seed app: %w", err)
	}
	if _, err := st.SetSelectedApps(ctx, "bench", TeamSlug, []string{AppID}); err != nil {
		return fmt.Errorf("seed selected apps: %w", err)
	}
	src, private, err := st.CreateSource(ctx, "bench", TeamSlug, AppID, "bench", []string{Origin})
	if err != nil {
		return fmt.Errorf("seed tracking source: %w", err)
	}
	s.Source, s.Private = src, private
	return nil
}

// Stop ends revtrack (drain, commit, flush) and removes everything the run created: the database,
// the topics, the consumer groups and the Redis keys.
func (s *Sandbox) Stop() error {
	errs := []error{s.Revtrack.Stop(45 * time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.Conn != nil {
		_ = s.Conn.Close()
	}
	if srv, err := clickhousex.OpenServer(ctx, s.CH); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, srv.Exec(ctx, "DROP DATABASE IF EXISTS "+s.CH.Database))
		_ = srv.Close()
	}
	errs = append(errs, s.deleteKafka(ctx))
	if s.RDB == nil {
		var err error
		if s.RDB, err = redisx.Open(ctx, s.Redis); err != nil {
			errs = append(errs, err)
		}
	}
	if s.RDB != nil {
		errs = append(errs, DeleteKeys(ctx, s.RDB, s.Redis.KeyPrefix))
		_ = s.RDB.Close()
	}
	return errors.Join(errs...)
}

func (s *Sandbox) deleteKafka(ctx context.Context) error {
	adm, err := Admin(s.Brokers)
	if err != nil {
		return err
	}
	defer adm.Close()
	return errors.Join(DeleteGroups(ctx, adm, s.GroupPrefix), DeleteTopics(ctx, adm, TopicNames(s.Suffix)))
}
