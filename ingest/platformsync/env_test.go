package platformsync_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/schemas"
)

// The service, the lease keepers and the landing loops start goroutines; each must end with its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// end is the dataset's last instant; the sync's clock stands an hour later.
var end = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// dataset is one app over eight months: enough history behind a 60-day initial window for
// several backward windows.
func dataset() *partnerfake.Dataset {
	cfg := partnerfake.DemoConfig(end)
	cfg.Apps, cfg.Shops = 1, 40
	cfg.Start = end.AddDate(0, -8, 0)
	return partnerfake.Generate(cfg)
}

// env is one test's stack: a migrated database, topics, the processors landing what the sync
// produces, a workspace "acme" connected to a fake partner API, and a sync service on all of it.
type env struct {
	db       pipeline.DB
	kc       kafkax.Config
	producer *kgo.Client
	store    *controlplane.Store
	ws       controlplane.Workspace
	ds       *partnerfake.Dataset
	fake     *partnerfake.Server
	srv      *httptest.Server
	app      string
	token    string
	now      atomic.Pointer[time.Time]
	logs     *syncBuffer
	reg      *prometheus.Registry
	metrics  *platformsync.Metrics

	// wrap, when set, serves requests instead of the fake (it may call the fake itself).
	wrap atomic.Pointer[func(w http.ResponseWriter, r *http.Request)]
	// client adjusts each run's partner API client.
	client func(*platformsync.Client)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func noLimit() partnerfake.ServerConfig {
	c := partnerfake.DefaultServerConfig()
	c.RequestsPerSecond = 0
	return c
}

func newEnv(t *testing.T, scfg partnerfake.ServerConfig) *env {
	t.Helper()
	ctx := testenv.Ctx(t)
	e := &env{db: pipeline.Migrated(t), ds: dataset(), logs: &syncBuffer{}, reg: prometheus.NewRegistry()}
	e.client = func(c *platformsync.Client) {
		c.PageSize, c.MaxAttempts, c.Backoff, c.MaxBackoff = 25, 4, 10*time.Millisecond, 50*time.Millisecond
	}
	e.kc, e.producer = pipeline.Topics(t)
	e.metrics = platformsync.NewMetrics(e.reg)
	now := end.Add(time.Hour)
	e.now.Store(&now)
	e.fake = partnerfake.NewServer(e.ds, scfg)
	e.token = scfg.Tokens[0]
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := e.wrap.Load(); f != nil {
			(*f)(w, r)
			return
		}
		e.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	e.app = e.ds.Apps[0].ID

	e.store = controlplane.NewStore(e.db.Conn, e.db.Redis, e.db.RedisC.KeyPrefix)
	if _, err := e.store.CreateWorkspace(ctx, "test", "acme", "Acme", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	// The revtrack app ID is the platform's: runs, cursors and rows all carry it.
	if err := e.store.PutApp(ctx, "test", controlplane.App{ID: e.app, PlatformAppID: e.app, Name: "App"}); err != nil {
		t.Fatal(err)
	}
	ws, err := e.store.SetSelectedApps(ctx, "test", "acme", []string{e.app})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	if _, err := e.store.Partners(keyring(t)).ConnectPartner(ctx, "test", "acme", scfg.OrgID, e.token); err != nil {
		t.Fatal(err)
	}
	startLanding(t, e)
	return e
}

func keyring(t *testing.T) *controlplane.Keyring {
	k, err := controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// startLanding runs the process component's consumers (land-platform-records among them).
func startLanding(t *testing.T, e *env) {
	t.Helper()
	cfg := processors.DefaultConfig()
	cfg.Backoff, cfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	svc, err := processors.New(cfg, processors.Deps{Kafka: e.kc, ClickHouse: e.db.Conn, Producer: e.producer,
		Registry: prometheus.NewRegistry(), Log: pipeline.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// config is the sync configuration of the tests: small windows and pages, so that a few hundred
// records take several windows and pages each way.
func config() platformsync.Config {
	c := platformsync.DefaultConfig()
	c.Window = 20 * 24 * time.Hour
	c.InitialWindow = 60 * 24 * time.Hour
	c.BackfillBudget = 0
	c.RequestsPerSecond = 0
	c.StartDelay = 0
	c.LockTTL = 3 * time.Second
	return c
}

// service builds a sync service (one "instance") on the env.
func (e *env) service(t *testing.T, cfg platformsync.Config) *platformsync.Service {
	t.Helper()
	// The partner API address is the operator's; the tests' is the local fake, on loopback.
	if cfg.BaseURL == platformsync.DefaultBaseURL {
		cfg.BaseURL = e.srv.URL
		cfg.Egress.AllowPrivateNetworks = true
	}
	svc := platformsync.NewService(cfg, platformsync.ServiceDeps{
		Workspaces:      e.store,
		Connections:     e.store.Partners(keyring(t)),
		CH:              e.db.Conn,
		Producer:        e.producer,
		Topic:           e.kc.Topic(schemas.TopicPlatformRecords),
		Redis:           e.db.Redis,
		RedisPrefix:     e.db.RedisC.KeyPrefix,
		Metrics:         e.metrics,
		Log:             slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ConfigureClient: e.client,
		Now:             func() time.Time { return *e.now.Load() },
	})
	t.Cleanup(svc.Close)
	return svc
}

func (e *env) count(t *testing.T, q string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := e.db.Conn.QueryRow(testenv.Ctx(t), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (e *env) strings(t *testing.T, q string, args ...any) []string {
	t.Helper()
	rows, err := e.db.Conn.Query(testenv.Ctx(t), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// transactionIDs are the fake's transactions of the app created in [from, to] (zero: unbounded).
func (e *env) transactionIDs(from, to time.Time) []string {
	var out []string
	for tx := range e.ds.Transactions() {
		if tx.AppID == e.app && !tx.CreatedAt.Before(from) && (to.IsZero() || !tx.CreatedAt.After(to)) {
			out = append(out, tx.ID)
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) numEvents() uint64 {
	var n uint64
	for range e.ds.Events(0) {
		n++
	}
	return n
}

// waitTransactions waits until the FINAL transaction table holds len(want) rows and returns its IDs.
func (e *env) waitTransactions(t *testing.T, want []string) {
	t.Helper()
	testenv.Eventually(t, "transactions landed", func() bool {
		return e.count(t, "SELECT count() FROM platform_transactions FINAL WHERE workspace_id = ?", e.ws.ID) >= uint64(len(want))
	})
	time.Sleep(300 * time.Millisecond) // anything extra in flight lands by now
	got := e.strings(t, "SELECT transaction_id FROM platform_transactions FINAL WHERE workspace_id = ?", e.ws.ID)
	if !equal(got, want) {
		t.Fatalf("landed %d transactions, want %d (first extra/missing: %s)", len(got), len(want), firstDiff(got, want))
	}
}

func (e *env) waitEvents(t *testing.T, want uint64) {
	t.Helper()
	testenv.Eventually(t, "events landed", func() bool {
		return e.count(t, "SELECT count() FROM platform_lifecycle_events FINAL WHERE workspace_id = ?", e.ws.ID) == want
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDiff(got, want []string) string {
	w := map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	g := map[string]bool{}
	for _, x := range got {
		g[x] = true
		if !w[x] {
			return "extra " + x
		}
	}
	for _, x := range want {
		if !g[x] {
			return "missing " + x
		}
	}
	return "none"
}

type cursorRow struct {
	Cursor    string
	WindowEnd time.Time
}

func (e *env) cursor(t *testing.T, stream string) cursorRow {
	t.Helper()
	var c cursorRow
	if err := e.db.Conn.QueryRow(testenv.Ctx(t), `SELECT cursor, window_end FROM sync_cursors FINAL WHERE workspace_id = ? AND app_id = ? AND stream = ?`,
		e.ws.ID, e.app, stream).Scan(&c.Cursor, &c.WindowEnd); err != nil {
		t.Fatalf("cursor %s: %v", stream, err)
	}
	c.WindowEnd = c.WindowEnd.UTC()
	return c
}

// firstAt is the createdAt of the app's oldest transaction at or after floor.
func (e *env) firstAt(floor time.Time) time.Time {
	for tx := range e.ds.Transactions() {
		if tx.AppID == e.app && !tx.CreatedAt.Before(floor) {
			return tx.CreatedAt
		}
	}
	return time.Time{}
}

// initialStart is where the first run's forward walk starts: now − InitialWindow at midnight.
func (e *env) initialStart(cfg platformsync.Config) time.Time {
	return e.now.Load().Add(-cfg.InitialWindow).Truncate(24 * time.Hour)
}
