package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/uploader"
)

// benchActor is who the connection and the mappings are created by (the audit log names it).
const benchActor = "bench@revtrack.local"

// uploadEnv is the system under test (main.go), all in this process.
type uploadEnv struct {
	stackDir string

	st       *benchkit.Sandbox
	kc       kafkax.Config
	ch       driver.Conn // the processors' and the uploader's own pool (the stack's serves the polls)
	producer *kgo.Client // the processors' producer, shared with the uploader for dead letters
	procReg  *prometheus.Registry
	procStop func() error

	fake    *googlefake.Fake
	fakeSrv *httptest.Server
	connect uploader.ConnectConfig
	keys    *controlplane.Keyring
	store   *controlplane.Store
	ws      string
	// validation maps paid (Validation only, as a new mapping is); live maps trial_converted with
	// Validation only off.
	validation, live controlplane.AdMapping

	up  *runningUploader
	log *slog.Logger
}

// open starts everything and creates the connection and the two mappings.
func (e *uploadEnv) open(ctx context.Context, revtrackArgs []string) error {
	e.st = benchkit.NewSandbox()
	if err := e.st.Start(ctx, "ingest", revtrackArgs); err != nil {
		return err
	}
	if err := e.st.Seed(ctx); err != nil {
		return err
	}
	e.ws = e.st.Source.WorkspaceID
	e.log = slog.New(slog.NewTextHandler(e.st.Revtrack.Logs, &slog.HandlerOptions{Level: slog.LevelWarn}))

	var err error
	if e.ch, err = clickhousex.Open(ctx, e.st.CH); err != nil {
		return err
	}
	e.kc = kafkax.DefaultConfig()
	e.kc.Brokers, e.kc.TopicSuffix = e.st.Brokers, e.st.Suffix
	e.procReg = prometheus.NewRegistry()
	if e.producer, err = kafkax.NewProducer(e.kc, "bench-upload", e.procReg); err != nil {
		return err
	}
	if err := e.startProcessors(); err != nil {
		return err
	}

	e.fake = googlefake.New(googlefake.DefaultConfig())
	e.fakeSrv = httptest.NewServer(e.fake)
	e.connect = uploader.DefaultConnectConfig()
	e.connect.GoogleBaseURL = e.fakeSrv.URL
	e.connect.Egress.AllowPrivateNetworks = true // the fake listens on loopback
	e.connect.OAuthClientID, e.connect.OAuthClientSecret = "revtrack-local", "revtrack-local-secret"
	if e.keys, err = controlplane.ParseKeyring(controlplane.DevelopmentEncryptionKeys); err != nil {
		return err
	}
	e.store = controlplane.NewStore(e.ch, e.st.RDB, e.st.Redis.KeyPrefix)
	return e.setUp(ctx)
}

// startProcessors runs every consumer of the process component, as `revtrack process` would.
func (e *uploadEnv) startProcessors() error {
	cfg := processors.DefaultConfig()
	cfg.GroupPrefix = e.st.GroupPrefix
	svc, err := processors.New(cfg, processors.Deps{Kafka: e.kc, ClickHouse: e.ch, Producer: e.producer,
		Registry: e.procReg, Log: e.log.With("component", "process")})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	e.procStop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(45 * time.Second):
			return errors.New("processors did not stop within 45s")
		}
	}
	return nil
}

// setUp connects the workspace through the fake's consent page, selects the fake's default account
// through its manager and creates the mappings, through the setup service the admin API uses.
func (e *uploadEnv) setUp(ctx context.Context) error {
	setup, err := uploader.NewSetup(uploader.SetupDeps{Config: e.connect, BaseURL: e.st.Revtrack.BaseURL, Store: e.store,
		Keys: e.keys, Redis: e.st.RDB, KeyPrefix: e.st.Redis.KeyPrefix, Logger: e.log})
	if err != nil {
		return err
	}
	authURL, err := setup.Connect(ctx, benchActor, e.ws)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		return fmt.Errorf("consent page: %w", err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return fmt.Errorf("consent page answered %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := setup.Callback(ctx, back.Query().Get("state"), back.Query().Get("code")); err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	sel, err := setup.SelectAccount(ctx, benchActor, e.ws, googlefake.DefaultCustomerID, googlefake.DefaultManagerID)
	if err != nil || sel.ActionsError != "" {
		return fmt.Errorf("select account: %v %s", err, sel.ActionsError)
	}
	if e.validation, err = setup.CreateMapping(ctx, benchActor, e.ws, uploader.MappingInput{SourceID: e.st.Source.ID,
		Milestone: "paid", ConversionActionID: googlefake.DefaultActionID, ConsentConfirmed: true}); err != nil {
		return fmt.Errorf("create the Validation only mapping: %w", err)
	}
	off := false
	if e.live, err = setup.CreateMapping(ctx, benchActor, e.ws, uploader.MappingInput{SourceID: e.st.Source.ID,
		Milestone: "trial_converted", ConversionActionID: googlefake.DefaultActionID2, ConsentConfirmed: true,
		ValidationOnly: &off}); err != nil {
		return fmt.Errorf("create the live mapping: %w", err)
	}
	if !e.validation.ValidationOnly || e.live.ValidationOnly {
		return fmt.Errorf("mappings: Validation only %v and %v, want true and false", e.validation.ValidationOnly, e.live.ValidationOnly)
	}
	return nil
}

// runningUploader is one uploader instance.
type runningUploader struct {
	cancel context.CancelFunc
	done   chan error
	reg    *prometheus.Registry
}

// startUploader runs a new uploader instance with the given dispatch interval; the previous one
// must be stopped. Every instance joins the same consumer group, so it continues where the previous
// one committed. Settings other than the interval and the batch sizes are the defaults.
func (e *uploadEnv) startUploader(interval time.Duration, u uploadOptions) error {
	if e.up != nil {
		return errors.New("an uploader is already running")
	}
	cfg := uploader.DefaultConfig()
	cfg.ConnectConfig = e.connect
	cfg.GroupPrefix = e.st.GroupPrefix
	cfg.DispatchInterval = interval
	cfg.BatchSize, cfg.LiveBatchSize = u.batch, u.liveBatch
	if err := cfg.Validate(); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	svc, err := uploader.New(cfg, uploader.Deps{ClickHouse: e.ch, Redis: e.st.RDB, RedisPrefix: e.st.Redis.KeyPrefix,
		Kafka: e.kc, Producer: e.producer, Credentials: e.store.AdConnections(e.keys), Mappings: e.store.AdMappings(),
		Registry: reg, Log: e.log.With("component", "upload")})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	up := &runningUploader{cancel: cancel, done: make(chan error, 1), reg: reg}
	go func() { up.done <- svc.Run(ctx) }()
	e.up = up
	return nil
}

func (e *uploadEnv) stopUploader() error {
	if e.up == nil {
		return nil
	}
	up := e.up
	e.up = nil
	up.cancel()
	select {
	case err := <-up.done:
		return err
	case <-time.After(45 * time.Second):
		return errors.New("uploader did not stop within 45s")
	}
}

// logs are revtrack's and the in-process services' warnings, shown when a pass fails.
func (e *uploadEnv) logs() string {
	if e.st == nil {
		return ""
	}
	return e.st.Revtrack.Logs.String()
}

// close stops the services in the reverse order of their start, then removes what the run created.
func (e *uploadEnv) close() error {
	var errs []error
	errs = append(errs, e.stopUploader())
	if e.procStop != nil {
		errs = append(errs, e.procStop())
	}
	if e.producer != nil {
		e.producer.Close()
	}
	if e.ch != nil {
		errs = append(errs, e.ch.Close())
	}
	if e.fakeSrv != nil {
		e.fakeSrv.Close()
	}
	if e.st != nil {
		if e.st.Conn != nil {
			errs = append(errs, e.dropDatabase())
		}
		errs = append(errs, e.st.Stop())
	}
	return errors.Join(errs...)
}

// dropDatabase drops the run's database before Sandbox.Stop does, with more time: on the busy
// shared 18.16 dropping this benchmark's tables (many small parts of upload_queue among them) can
// take longer than Sandbox.Stop's whole one-minute budget, which then leaves the topics, consumer
// groups and Redis keys behind. Sandbox.Stop's own DROP … IF EXISTS is then immediate.
func (e *uploadEnv) dropDatabase() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := e.st.CH
	cfg.ReadTimeout = 5 * time.Minute
	srv, err := clickhousex.OpenServer(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	start := time.Now()
	if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS "+cfg.Database); err != nil {
		return fmt.Errorf("drop database %s: %w", cfg.Database, err)
	}
	progress("database %s dropped in %s", cfg.Database, time.Since(start).Round(time.Millisecond))
	return nil
}
