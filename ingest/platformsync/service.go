package platformsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

// Workspaces is the part of the control plane the sync reads (controlplane.Store).
type Workspaces interface {
	Workspace(ctx context.Context, id string) (controlplane.Workspace, error)
	Workspaces(ctx context.Context) ([]controlplane.Workspace, error)
	Apps(ctx context.Context) ([]controlplane.App, error)
}

// Connections opens a workspace's partner connection and token (controlplane.Partners).
type Connections interface {
	PartnerConnection(ctx context.Context, workspaceID string) (controlplane.PartnerConnection, string, error)
}

var (
	_ Workspaces  = (*controlplane.Store)(nil)
	_ Connections = (*controlplane.Partners)(nil)
)

// ServiceConn is the ClickHouse connection of the service: the syncer's writes and its own reads of
// runs (runs.go).
type ServiceConn interface {
	Conn
	Querier
}

// Errors of starting a run, besides ErrAlreadyRunning.
var (
	ErrNotConnected   = errors.New("the workspace has no partner connection")
	ErrAppNotSelected = errors.New("the app is not one of the workspace's selected apps")
	ErrNoApps         = errors.New("the workspace has no selected apps")
	errShutdown       = errors.New("the process is shutting down")
)

// ServiceDeps are what the service runs on.
type ServiceDeps struct {
	Workspaces  Workspaces
	Connections Connections
	CH          ServiceConn
	Producer    Producer
	// Topic is the full platform-records topic name.
	Topic string
	// Redis holds the per-app locks and the progress of running runs, under RedisPrefix.
	Redis       RedisClient
	RedisPrefix string
	Metrics     *Metrics
	Log         *slog.Logger
	// ConfigureClient, when set, adjusts each run's partner API client (tests: short backoffs).
	ConfigureClient func(*Client)
	// Now is the syncer's clock (nil: time.Now).
	Now func() time.Time
}

// RedisClient is the part of redis.UniversalClient the service uses: locks and progress.
type RedisClient interface {
	LockClient
	ProgressClient
}

// Service runs syncs: one app now (RunApp, for the CLI), several in the background (Start, for the
// admin API) and every connected app on a schedule (Run). Every run holds its app's lock, so runs
// of one app never overlap, whatever started them and in whichever process.
type Service struct {
	cfg   Config
	d     ServiceDeps
	locks *Locks
	prog  *ProgressPublisher
	runs  runs
	log   *slog.Logger

	// base outlives requests: background and scheduled runs use it; Run cancels it on shutdown.
	base context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup
}

// NewService builds the service; nothing runs until RunApp, Start or Run.
func NewService(cfg Config, d ServiceDeps) *Service {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, d: d, log: log, runs: runs{CH: d.CH},
		locks: &Locks{Client: d.Redis, Prefix: d.RedisPrefix, TTL: cfg.LockTTL},
		prog:  &ProgressPublisher{Client: d.Redis, Prefix: d.RedisPrefix, Interval: cfg.ProgressInterval}}
	s.base, s.stop = context.WithCancelCause(context.Background())
	return s
}

func (s *Service) now() time.Time {
	if s.d.Now != nil {
		return s.d.Now().UTC()
	}
	return time.Now().UTC()
}

// target is a workspace ready to sync: its partner connection is open.
type target struct {
	ws           controlplane.Workspace
	conn         controlplane.PartnerConnection
	token        string
	platformApps map[string]string
}

// open loads the workspace and opens its connection; apps must be among its selected apps (none:
// all of them). It returns the apps to sync.
func (s *Service) open(ctx context.Context, workspaceID string, apps []string) (target, []string, error) {
	w, err := s.d.Workspaces.Workspace(ctx, workspaceID)
	if err != nil {
		return target{}, nil, err
	}
	if len(apps) == 0 {
		apps = w.SelectedAppIDs
	}
	if len(apps) == 0 {
		return target{}, nil, ErrNoApps
	}
	for _, a := range apps {
		if !slices.Contains(w.SelectedAppIDs, a) {
			return target{}, nil, fmt.Errorf("%w: %q", ErrAppNotSelected, a)
		}
	}
	t, err := s.openWorkspace(ctx, w)
	return t, apps, err
}

func (s *Service) openWorkspace(ctx context.Context, w controlplane.Workspace) (target, error) {
	conn, token, err := s.d.Connections.PartnerConnection(ctx, w.ID)
	if errors.Is(err, controlplane.ErrNotFound) {
		return target{}, ErrNotConnected
	}
	if err != nil {
		return target{}, err
	}
	known, err := s.d.Workspaces.Apps(ctx)
	if err != nil {
		return target{}, err
	}
	ids := map[string]string{}
	for _, a := range known {
		ids[a.ID] = a.PlatformAppID
	}
	return target{ws: w, conn: conn, token: token, platformApps: ids}, nil
}

// syncer builds one run's syncer. Its client is the connection's own (one pacer per connection).
func (s *Service) syncer(t target, client *Client) *Syncer {
	return &Syncer{Client: client, CH: s.d.CH, Producer: s.d.Producer, Topic: s.d.Topic, PlatformApps: t.platformApps,
		Window: s.cfg.Window, InitialWindow: s.cfg.InitialWindow, Overlap: s.cfg.Overlap, RowLimit: uint64(max(s.cfg.RowLimit, 0)),
		BackfillBudget: s.cfg.BackfillBudget, Progress: s.prog, Metrics: s.d.Metrics, Now: s.d.Now, Log: s.log}
}

func (s *Service) client(t target) *Client {
	c := &Client{BaseURL: s.cfg.BaseURL, OrgID: t.conn.OrganizationID, Token: t.token, Version: s.cfg.APIVersion,
		HTTP: httpClient(s.cfg.Egress, s.cfg.RequestsPerSecond, s.d.Metrics), Log: s.log}
	if s.d.ConfigureClient != nil {
		s.d.ConfigureClient(c)
	}
	return c
}

// RunApp syncs one selected app now and waits for the run to end. It fails at once with
// ErrAlreadyRunning if another run of the app holds its lock.
func (s *Service) RunApp(ctx context.Context, workspaceID, appID, trigger string) (schemas.SyncRun, error) {
	t, _, err := s.open(ctx, workspaceID, []string{appID})
	if err != nil {
		return schemas.SyncRun{}, err
	}
	return s.runLocked(ctx, t, s.syncer(t, s.client(t)), appID, trigger)
}

func (s *Service) runLocked(ctx context.Context, t target, sy *Syncer, app, trigger string) (schemas.SyncRun, error) {
	le, err := s.locks.Acquire(ctx, t.ws.ID, app)
	if err != nil {
		if errors.Is(err, ErrAlreadyRunning) {
			s.d.Metrics.alreadyRunning(trigger)
		}
		return schemas.SyncRun{}, err
	}
	defer s.release(le)
	held, stop := le.Hold(ctx)
	defer stop()
	run, err := s.begin(held, sy, t.ws.ID, app, trigger)
	if err != nil {
		return run, err
	}
	s.d.Metrics.started(1)
	defer s.d.Metrics.started(-1)
	return sy.Execute(held, t.ws.ID, app, run)
}

// begin marks the app's runs left running by a stopped process as failed (the caller holds the
// app's lock, so none of them is alive), then records the new run.
func (s *Service) begin(ctx context.Context, sy *Syncer, ws, app, trigger string) (schemas.SyncRun, error) {
	stale, err := s.runs.Running(ctx, ws, app)
	if err != nil {
		return schemas.SyncRun{}, err
	}
	for _, run := range stale {
		fin := s.now().Truncate(time.Second)
		run.Status, run.FinishedAt = StatusFailed, &fin
		run.Error = "interrupted: the process running it stopped before it finished; later runs resume from the cursors"
		if err := writeRun(ctx, s.d.CH, ws, app, run); err != nil {
			return schemas.SyncRun{}, err
		}
		s.log.Warn("sync run left running by a stopped process marked failed", "workspace_id", ws, "app_id", app, "run_id", run.RunID)
	}
	return sy.Begin(ctx, ws, app, trigger)
}

func (s *Service) release(le *Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := le.Release(ctx); err != nil {
		s.log.Warn("sync lock not released; it expires on its own", "err", err)
	}
}

// Started is the answer to Start: the runs begun (status running) and the apps skipped because a
// run of theirs was already in flight.
type Started struct {
	Runs           []StartedRun
	AlreadyRunning []string
}

// StartedRun is a run Start began, as written to sync_runs.
type StartedRun struct {
	AppID string
	schemas.SyncRun
}

// Start begins runs of the workspace's apps (every selected app when appIDs is empty) and returns
// once each run's row is written; the runs go on in the background, one per app, until they end
// or the service stops (they then end failed and resumable). If every app already has a run in
// flight it fails with ErrAlreadyRunning.
func (s *Service) Start(ctx context.Context, workspaceID string, appIDs []string, trigger string) (Started, error) {
	out := Started{Runs: []StartedRun{}, AlreadyRunning: []string{}}
	t, apps, err := s.open(ctx, workspaceID, appIDs)
	if err != nil {
		return out, err
	}
	// One client for the workspace's runs: they share the connection's pace.
	client := s.client(t)
	var errs []error
	for _, app := range apps {
		le, err := s.locks.Acquire(ctx, t.ws.ID, app)
		if errors.Is(err, ErrAlreadyRunning) {
			s.d.Metrics.alreadyRunning(trigger)
			out.AlreadyRunning = append(out.AlreadyRunning, app)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		held, stop := le.Hold(s.base)
		sy := s.syncer(t, client)
		run, err := s.begin(ctx, sy, t.ws.ID, app, trigger)
		if err != nil {
			stop()
			s.release(le)
			errs = append(errs, err)
			continue
		}
		out.Runs = append(out.Runs, StartedRun{AppID: app, SyncRun: run})
		s.wg.Add(1)
		s.d.Metrics.started(1)
		go func() {
			defer s.wg.Done()
			defer s.d.Metrics.started(-1)
			defer s.release(le)
			defer stop()
			_, _ = sy.Execute(held, t.ws.ID, app, run) // Execute logs and records the outcome
		}()
	}
	switch {
	case len(out.Runs) > 0:
		return out, nil
	case len(errs) > 0:
		return out, errors.Join(errs...)
	default:
		return out, fmt.Errorf("%w: %v", ErrAlreadyRunning, out.AlreadyRunning)
	}
}

// Run serves until ctx ends: with schedule, it syncs every connected workspace's selected apps
// every Interval (trigger schedule). When ctx ends, runs in flight (scheduled or started by
// Start) are cancelled, end failed with the reason, and Run returns once they have.
func (s *Service) Run(ctx context.Context, schedule bool) error {
	defer context.AfterFunc(ctx, func() { s.stop(errShutdown) })()
	if schedule && s.cfg.Interval > 0 {
		s.log.Info("platform sync scheduled", "interval", s.cfg.Interval, "first_in", s.cfg.StartDelay)
		s.scheduleLoop(ctx)
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// Close cancels the runs in flight and waits for them to end.
func (s *Service) Close() {
	s.stop(errShutdown)
	s.wg.Wait()
}
