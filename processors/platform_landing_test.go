package processors

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// smallDataset is a few hundred transactions of one app over four months.
func smallDataset() *partnerfake.Dataset {
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops = 1, 60
	cfg.Start = cfg.End.AddDate(0, -4, 0)
	return partnerfake.Generate(cfg)
}

type platformEnv struct {
	env
	ds     *partnerfake.Dataset
	fake   *partnerfake.Server
	fail   atomic.Int64 // requests left before the wrapper starts answering 500 (<0: never)
	srv    *httptest.Server
	syncer *platformsync.Syncer
	app    string
}

func setupPlatform(t *testing.T, scfg partnerfake.ServerConfig) *platformEnv {
	t.Helper()
	return setupPlatformWith(t, scfg, smallDataset())
}

// setupPlatformWith serves ds from the fake partner API.
func setupPlatformWith(t *testing.T, scfg partnerfake.ServerConfig, ds *partnerfake.Dataset) *platformEnv {
	t.Helper()
	pe := &platformEnv{env: setup(t), ds: ds}
	pe.fail.Store(-1)
	pe.fake = partnerfake.NewServer(pe.ds, scfg)
	pe.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := pe.fail.Load(); n >= 0 {
			if n == 0 {
				http.Error(w, "scripted outage", http.StatusInternalServerError)
				return
			}
			pe.fail.Add(-1)
		}
		pe.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(pe.srv.Close)
	pe.app = pe.ds.Apps[0].ID
	end := pe.ds.Config.End.Add(time.Hour)
	pe.syncer = &platformsync.Syncer{
		Client: &platformsync.Client{BaseURL: pe.srv.URL, OrgID: scfg.OrgID, Token: scfg.Tokens[0], Version: "2025-07",
			MaxAttempts: 3, Backoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond},
		CH: pe.ch, Producer: pe.producer, Topic: pe.kc.Topic(schemas.TopicPlatformRecords),
		Now: func() time.Time { return end },
	}
	startPlatformLanding(t, pe.env)
	return pe
}

func startPlatformLanding(t *testing.T, e env) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Backoff, cfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	cl, err := kafkax.NewConsumer(e.kc, "land-platform-records", "test.land-platform-records"+e.kc.TopicSuffix,
		[]string{e.kc.Topic(schemas.TopicPlatformRecords)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	dlq := &DeadLetterWriter{Producer: e.producer, Topic: e.kc.Topic(schemas.TopicDeadLetters)}
	loop := platformLandingLoop(cfg, e.ch, dlq, cl, NewLoopMetrics(reg, "land-platform-records"), quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		cl.Close()
	})
}

func (pe *platformEnv) count(t *testing.T, q string) uint64 {
	t.Helper()
	var n uint64
	if err := pe.ch.QueryRow(testenv.Ctx(t), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (pe *platformEnv) truthTransactions() (n int, gross, net map[string]int64) {
	gross, net = map[string]int64{}, map[string]int64{}
	for _, c := range pe.ds.Truth.Customers {
		if c.AppID != pe.app {
			continue
		}
		for _, tot := range c.Totals {
			n += tot.Count
			gross[tot.Currency] += tot.Gross
			net[tot.Currency] += tot.Net
		}
	}
	return n, gross, net
}

func (pe *platformEnv) numEvents() int {
	n := 0
	for range pe.ds.Events(0) {
		n++
	}
	return n
}

// waitLanded waits until the FINAL counts reach the dataset's and checks sums per currency.
func (pe *platformEnv) checkLanded(t *testing.T) {
	t.Helper()
	wantTx, gross, net := pe.truthTransactions()
	wantEv := pe.numEvents()
	if wantTx == 0 || wantEv == 0 {
		t.Fatalf("dataset too small: %d transactions, %d events", wantTx, wantEv)
	}
	eventually(t, "transactions landed", func() bool {
		return pe.count(t, "SELECT count() FROM platform_transactions FINAL") == uint64(wantTx)
	})
	eventually(t, "events landed", func() bool {
		return pe.count(t, "SELECT count() FROM platform_lifecycle_events FINAL") == uint64(wantEv)
	})
	rows, err := pe.ch.Query(testenv.Ctx(t), "SELECT currency, sum(gross_cents), sum(net_cents) FROM platform_transactions FINAL GROUP BY currency")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var cur string
		var g, n int64
		if err := rows.Scan(&cur, &g, &n); err != nil {
			t.Fatal(err)
		}
		seen++
		if g != gross[cur] || n != net[cur] {
			t.Errorf("%s: gross %d net %d, want %d %d", cur, g, n, gross[cur], net[cur])
		}
	}
	if seen != len(gross) {
		t.Errorf("%d currencies landed, want %d", seen, len(gross))
	}
	// The customer days the landing consumer recomputes (migration 0024) agree with what landed.
	eventually(t, "customer days agree with the transactions", func() bool {
		var n uint64
		err := pe.ch.QueryRow(testenv.Ctx(t), schemas.CustomerDaysMismatches, "acme", "acme").Scan(&n)
		return err == nil && n == 0
	})
	// So do the observed usage days (migration 0026) with the usage records.
	eventually(t, "observed usage days agree with the usage records", func() bool {
		var n uint64
		err := pe.ch.QueryRow(testenv.Ctx(t), schemas.ObservedDaysMismatches, "acme", "acme").Scan(&n)
		return err == nil && n == 0
	})
}

func noLimit() partnerfake.ServerConfig {
	c := partnerfake.DefaultServerConfig()
	c.RequestsPerSecond = 0
	return c
}

func TestPlatformSyncLandsDatasetAndRerunIsNoop(t *testing.T) {
	pe := setupPlatform(t, noLimit())
	ctx := testenv.Ctx(t)
	run, err := pe.syncer.Run(ctx, "acme", pe.app, "manual")
	if err != nil {
		t.Fatal(err)
	}
	wantTx, _, _ := pe.truthTransactions()
	if run.Status != "succeeded" || run.TransactionsCount != uint64(wantTx) || run.EventsCount != uint64(pe.numEvents()) {
		t.Fatalf("run = %+v, want succeeded with %d transactions, %d events", run, wantTx, pe.numEvents())
	}
	if run.CoverageFrom == nil || run.CoverageThrough == nil || !run.CoverageThrough.Equal(pe.syncer.Now()) {
		t.Errorf("coverage %v … %v", run.CoverageFrom, run.CoverageThrough)
	}
	pe.checkLanded(t)
	if n := pe.count(t, "SELECT count() FROM sync_cursors FINAL WHERE stream = 'transactions:start' AND cursor = 'origin'"); n != 1 {
		t.Errorf("transactions:start origin rows = %d", n)
	}

	cursorsBefore := pe.count(t, "SELECT count() FROM sync_cursors")
	txBefore := pe.count(t, "SELECT count() FROM platform_transactions")
	run2, err := pe.syncer.Run(ctx, "acme", pe.app, "schedule")
	if err != nil {
		t.Fatal(err)
	}
	if run2.TransactionsCount != 0 || run2.EventsCount != 0 || run2.Status != "succeeded" {
		t.Errorf("second run = %+v, want a no-op", run2)
	}
	time.Sleep(time.Second) // anything produced would land by now
	if n := pe.count(t, "SELECT count() FROM sync_cursors"); n != cursorsBefore {
		t.Errorf("cursor rows %d → %d on a no-op run", cursorsBefore, n)
	}
	if n := pe.count(t, "SELECT count() FROM platform_transactions"); n != txBefore {
		t.Errorf("transaction rows %d → %d on a no-op run", txBefore, n)
	}
	if n := pe.count(t, "SELECT count() FROM sync_runs FINAL WHERE status = 'succeeded'"); n != 2 {
		t.Errorf("succeeded runs = %d", n)
	}
}

func TestPlatformSyncRetriesThrottling(t *testing.T) {
	pe := setupPlatform(t, noLimit())
	pe.syncer.Client.MaxAttempts = 4
	pe.fake.Script(partnerfake.Fault{Status: 429, Times: 2}, partnerfake.Fault{Status: 503})
	run, err := pe.syncer.Run(testenv.Ctx(t), "acme", pe.app, "manual")
	if err != nil || run.Status != "succeeded" {
		t.Fatalf("run %+v: %v", run, err)
	}
	// Scripted faults count as Faulted, not Throttled (Retry-After is covered in platformsync).
	if f := pe.fake.Stats().Faulted; f != 3 {
		t.Errorf("faulted %d times, want 3", f)
	}
	pe.checkLanded(t)
}

func TestPlatformSyncResumesAfterFailure(t *testing.T) {
	pe := setupPlatform(t, noLimit())
	ctx := testenv.Ctx(t)
	pe.fail.Store(4) // the fifth request and every one after fail
	run, err := pe.syncer.Run(ctx, "acme", pe.app, "schedule")
	if err == nil || run.Status != "failed" || run.Error == "" {
		t.Fatalf("run %+v, err %v: want failed", run, err)
	}
	var status, msg string
	if err := pe.ch.QueryRow(ctx, "SELECT toString(status), error FROM sync_runs FINAL WHERE run_id = ?", run.RunID).Scan(&status, &msg); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || !strings.Contains(msg, "500") {
		t.Errorf("stored run %s %q", status, msg)
	}
	var he *platformsync.HTTPError
	if !errors.As(err, &he) || he.Status != 500 {
		t.Errorf("error %v is not the HTTP 500", err)
	}
	if run.TransactionsCount == 0 {
		t.Errorf("no page was committed before the failure; the test does not exercise resumption")
	}

	pe.fail.Store(-1)
	run2, err := pe.syncer.Run(ctx, "acme", pe.app, "schedule")
	if err != nil {
		t.Fatal(err)
	}
	wantTx, _, _ := pe.truthTransactions()
	if got := run.TransactionsCount + run2.TransactionsCount; got != uint64(wantTx) {
		t.Errorf("the two runs produced %d transactions, want %d (resume re-read or skipped records)", got, wantTx)
	}
	pe.checkLanded(t)
}
