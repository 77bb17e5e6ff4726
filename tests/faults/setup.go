package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// suite is everything a run starts, so that teardown stops and removes exactly that.
type suite struct {
	stack     stackCtl
	stackLog  *os.File
	stackLock *os.File
	stackDown bool // stop the stack at the end
	names     runNames
	brokers   []string
	ch        clickhousex.Config
	rc        redisx.Config
	conn      driver.Conn

	comps  []*component
	byName map[string]*component
	seeded seeded

	led       *ledger
	load      *load
	malformed *malformed
	ready     *readinessPoll
	cancel    context.CancelFunc // the pollers
}

// setup brings the stack up, migrates and seeds a fresh database, starts the four components and
// the pollers. A non-nil suite must be torn down even when err is set.
func setup(ctx context.Context, o options) (*suite, error) {
	st, err := newStackCtl(o.stackScript, o.stackName, o.stackDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.logDir, 0o755); err != nil {
		return nil, err
	}
	s := &suite{stack: st, names: newRunNames(), led: newLedger(), byName: map[string]*component{}, stackDown: o.stackDown}
	if s.stackLock, err = st.lock(15 * time.Minute); err != nil {
		return nil, err
	}
	if s.stackLog, err = os.OpenFile(o.logDir+"/stack.log", os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600); err != nil {
		return s, err
	}
	progress("stack %s up (log %s)", o.stackName, s.stackLog.Name())
	if err := st.up(ctx, s.stackLog); err != nil {
		return s, err
	}
	env, err := st.env(ctx, "REVTRACK_KAFKA_BROKERS", "REVTRACK_CLICKHOUSE_ADDR", "REVTRACK_CLICKHOUSE_USERNAME",
		"REVTRACK_CLICKHOUSE_PASSWORD", "REVTRACK_REDIS_ADDR")
	if err != nil {
		return s, err
	}
	s.brokers = strings.Split(env["REVTRACK_KAFKA_BROKERS"], ",")
	s.ch = clickhousex.DefaultConfig()
	s.ch.Addr, s.ch.Username, s.ch.Password = env["REVTRACK_CLICKHOUSE_ADDR"], env["REVTRACK_CLICKHOUSE_USERNAME"], env["REVTRACK_CLICKHOUSE_PASSWORD"]
	s.ch.Database, s.ch.ReadTimeout = s.names.database, 30*time.Second
	s.rc = redisx.DefaultConfig()
	s.rc.Addr, s.rc.KeyPrefix = env["REVTRACK_REDIS_ADDR"], s.names.redisPrefix

	bin := absPath(o.bin)
	args := []string{"--log-level", "info",
		"--kafka-topic-suffix", s.names.topicSuffix, "--clickhouse-database", s.names.database,
		"--redis-key-prefix", s.names.redisPrefix, "--process-group-prefix", s.names.groupPrefix,
		"--ads-group-prefix", s.names.groupPrefix,
		// Far above the load: the suite measures faults, not the rate limits (their Redis round
		// trip still runs on every request).
		"--ingest-server-events-per-minute", "1000000", "--ingest-browser-requests-per-minute", "1000000",
		// Local only, as deploy/local/run: the published development key, loopback egress.
		"--allow-development-encryption-key", "--egress-allow-private-networks"}
	cenv := childEnv(env)
	progress("run %s: database %s, topics *%s, logs in %s", s.names.id, s.names.database, s.names.topicSuffix, o.logDir)
	mig := exec.CommandContext(ctx, bin, append([]string{"migrate"}, args...)...)
	mig.Env, mig.Stdout, mig.Stderr = cenv, s.stackLog, s.stackLog
	if err := mig.Run(); err != nil {
		return s, fmt.Errorf("revtrack migrate: %w (log: %s)", err, s.stackLog.Name())
	}
	if s.conn, err = clickhousex.Open(ctx, s.ch); err != nil {
		return s, err
	}
	rdb, err := redisx.Open(ctx, s.rc)
	if err != nil {
		return s, err
	}
	s.seeded, err = seed(ctx, s.conn, rdb, s.rc.KeyPrefix)
	_ = rdb.Close()
	if err != nil {
		return s, err
	}

	for _, name := range []string{"ingest", "process", "query", "upload"} {
		c, err := newComponent(name, bin, args, cenv, o.logDir)
		if err != nil {
			return s, err
		}
		s.comps = append(s.comps, c)
		s.byName[name] = c
		if err := c.start(); err != nil {
			return s, err
		}
	}
	for _, c := range s.comps {
		if err := c.ready(ctx, 90*time.Second); err != nil {
			return s, err
		}
	}

	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.ready = newReadinessPoll(s.comps, time.Second)
	go s.ready.run(pctx)
	go (&landingPoll{conn: s.conn, led: s.led, sourceID: s.seeded.src.ID, interval: o.poll}).run(pctx)

	to := target{ingestURL: s.byName["ingest"].baseURL(), teamSlug: faultsSlug, publicKey: s.seeded.src.PublicKey,
		private: s.seeded.private, origin: faultsOrigin}
	s.load = newLoad(o.load, to, s.led, s.names.id)
	s.malformed = &malformed{to: to, queryURL: s.byName["query"].baseURL(), adminKey: s.seeded.adminKey,
		otherPrivate: s.seeded.otherPrivate, otherPublic: s.seeded.otherSrc.PublicKey, otherWorkspaceKey: s.seeded.otherWorkspaceKey,
		led: s.led, runID: s.names.id, client: &http.Client{Timeout: o.load.Timeout}, bound: o.bound}
	return s, nil
}

// awaitLanding waits until every event of the load that the edge acknowledged has arrived in its
// landing tables, for at most limit, and returns how long that took. (The acknowledged malformed
// events are not waited for: they were sent minutes earlier, and the accounting reports them.)
func (s *suite) awaitLanding(ctx context.Context, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit && ctx.Err() == nil {
		left := 0
		for _, e := range s.led.pending() {
			if e.Origin == originLoad {
				left++
			}
		}
		if left == 0 {
			return time.Since(start)
		}
		sleep(ctx, 250*time.Millisecond)
	}
	return time.Since(start)
}

// teardown stops the components and the pollers, removes the run's data unless keep, stops the
// stack if asked, and lets the next suite run in.
func (s *suite) teardown(keep bool) {
	defer func() {
		if s.stackLock != nil {
			_ = s.stackLock.Close()
		}
	}()
	if err := stopAll(s.comps); err != nil {
		progress("stopping components: %v", err)
	}
	if s.cancel != nil {
		s.cancel()
	}
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if !keep && s.brokers != nil {
		if err := cleanup(s.ch, s.rc, s.brokers, s.names); err != nil {
			progress("cleanup: %v", err)
		}
	}
	if s.stackDown && s.stackLog != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.stack.down(ctx, s.stackLog); err != nil {
			progress("%v", err)
		}
	}
	if s.stackLog != nil {
		_ = s.stackLog.Close()
	}
}
