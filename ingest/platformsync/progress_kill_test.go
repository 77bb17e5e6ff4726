package platformsync_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// childEnv carries a killable sync process's setup: the parent test's stack and fake.
const childEnv = "REVTRACK_TEST_KILLED_SYNC"

type childSetup struct {
	CH       clickhousex.Config
	Redis    redisx.Config
	Kafka    kafkax.Config
	URL      string
	WS, App  string
	Interval time.Duration
}

// A sync process killed mid-run (SIGKILL: nothing of it runs again) leaves its run marked running.
// Its last progress is read until its key expires, 5 progress intervals after the last publish;
// from then on the run shows status running and progress null, never progress frozen forever, and
// the app's next run marks it failed.
func TestKilledRunStopsShowingProgress(t *testing.T) {
	e := newEnv(t, noLimit())
	ctx := testenv.Ctx(t)
	g := newGate(t, e, 4) // the child's run loads a few pages, then waits on the partner API
	const interval = 200 * time.Millisecond
	setup, _ := json.Marshal(childSetup{CH: e.db.CH, Redis: e.db.RedisC, Kafka: e.kc, URL: e.srv.URL, WS: e.ws.ID, App: e.app, Interval: interval})
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(setup))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	g.waitHeld(t)
	var before schemas.SyncProgress
	var runID string
	testenv.Eventually(t, "the child's progress after its first pages", func() bool {
		rs, err := e.reader().List(ctx, e.ws.ID, e.app, 1)
		if err != nil || len(rs) != 1 || rs[0].Progress == nil || rs[0].Progress.Pages < 3 {
			return false
		}
		before, runID = *rs[0].Progress, rs[0].RunID
		return true
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()

	var gone time.Duration
	for {
		rs, err := e.reader().List(ctx, e.ws.ID, e.app, 1)
		if err != nil || len(rs) != 1 || rs[0].RunID != runID || rs[0].Status != platformsync.StatusRunning {
			t.Fatalf("after the kill: %+v, %v", rs, err)
		}
		if p := rs[0].Progress; p == nil {
			gone = time.Since(killed)
			break
		} else if p.UpdatedAt.After(killed) {
			t.Fatalf("progress published after the kill: %+v", p)
		}
		if time.Since(killed) > 10*5*interval {
			t.Fatalf("the killed run still shows progress %v after the kill", time.Since(killed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("killed with %d pages, %d transactions, %d events loaded; its progress vanished %v later (TTL %v)",
		before.Pages, before.TransactionsCount, before.EventsCount, gone, 5*interval)
	if gone > 5*interval+time.Second {
		t.Errorf("progress vanished %v after the kill, want within the TTL %v", gone, 5*interval)
	}

	// The lock expires (LockTTL) and the next run marks the dead one failed.
	g.open()
	svc := e.service(t, config())
	testenv.Eventually(t, "the next run, once the dead run's lock expired", func() bool {
		_, err := svc.RunApp(ctx, e.ws.ID, e.app, platformsync.TriggerManual)
		if err != nil && !errors.Is(err, platformsync.ErrAlreadyRunning) {
			t.Fatal(err)
		}
		return err == nil
	})
	rs, err := e.reader().List(ctx, e.ws.ID, e.app, 2)
	if err == nil && len(rs) == 2 && rs[0].RunID == runID {
		// Both runs started at the test clock's same instant, so the list may give them in either order.
		rs[0], rs[1] = rs[1], rs[0]
	}
	if err != nil || len(rs) != 2 || rs[1].RunID != runID || rs[1].Status != platformsync.StatusFailed || rs[1].Progress != nil ||
		!strings.Contains(rs[1].Error, "stopped before it finished") || rs[0].Status != platformsync.StatusSucceeded || rs[0].Progress != nil {
		t.Fatalf("after the next run: %+v, %v", rs, err)
	}
}

// TestKilledRunChild is the process TestKilledRunStopsShowingProgress kills: it syncs the parent's
// app until it is killed. It does nothing in a normal test run.
func TestKilledRunChild(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("run by TestKilledRunStopsShowingProgress")
	}
	var s childSetup
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ch, err := clickhousex.Open(ctx, s.CH)
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := redisx.Open(ctx, s.Redis)
	if err != nil {
		t.Fatal(err)
	}
	producer, err := kafkax.NewProducer(s.Kafka, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	store := controlplane.NewStore(ch, rdb, s.Redis.KeyPrefix)
	cfg := config()
	cfg.BaseURL, cfg.Egress.AllowPrivateNetworks, cfg.ProgressInterval = s.URL, true, s.Interval
	svc := platformsync.NewService(cfg, platformsync.ServiceDeps{Workspaces: store, Connections: store.Partners(keyring(t)), CH: ch,
		Producer: producer, Topic: s.Kafka.Topic(schemas.TopicPlatformRecords), Redis: rdb, RedisPrefix: s.Redis.KeyPrefix,
		ConfigureClient: func(c *platformsync.Client) { c.PageSize = 25 },
		Now:             func() time.Time { return end.Add(time.Hour) }})
	_, err = svc.RunApp(ctx, s.WS, s.App, platformsync.TriggerManual)
	t.Fatalf("the run ended before it was killed: %v", err)
}
