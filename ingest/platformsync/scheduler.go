package platformsync

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/controlplane"
)

// scheduleLoop runs a pass StartDelay after start, then Interval after the end of each pass, until
// ctx ends. The passes' runs use the service's base context, which Run cancels with the shutdown
// reason when ctx ends.
func (s *Service) scheduleLoop(ctx context.Context) {
	t := time.NewTimer(s.cfg.StartDelay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.SchedulePass(s.base)
		t.Reset(s.cfg.Interval)
	}
}

// SchedulePass syncs every connected workspace's selected apps once (trigger schedule): up to
// Concurrency workspaces at once, each workspace's apps one after another. It skips workspaces
// without access or without a partner connection, apps whose latest run (of any trigger, from any
// instance) started less than nine tenths of an interval ago, and apps whose lock is held, so that
// several instances together sync each app about once per interval.
func (s *Service) SchedulePass(ctx context.Context) {
	wss, err := s.d.Workspaces.Workspaces(ctx)
	if err != nil {
		s.log.Warn("scheduled sync: cannot list workspaces", "err", err)
		return
	}
	var g errgroup.Group
	g.SetLimit(max(s.cfg.Concurrency, 1))
	for _, w := range wss {
		if !w.HasAccess() || len(w.SelectedAppIDs) == 0 {
			continue
		}
		g.Go(func() error { s.scheduleWorkspace(ctx, w); return nil })
	}
	_ = g.Wait()
}

func (s *Service) scheduleWorkspace(ctx context.Context, w controlplane.Workspace) {
	log := s.log.With("workspace_id", w.ID)
	t, err := s.openWorkspace(ctx, w)
	if errors.Is(err, ErrNotConnected) {
		return
	}
	if err != nil {
		log.Warn("scheduled sync: cannot open the partner connection", "err", err)
		return
	}
	client := s.client(t)
	for _, app := range w.SelectedAppIDs {
		if ctx.Err() != nil {
			return
		}
		last, ok, err := s.runs.LastStarted(ctx, w.ID, app)
		if err != nil {
			log.Warn("scheduled sync: cannot read the app's runs", "app_id", app, "err", err)
			continue
		}
		if ok && s.now().Sub(last) < s.cfg.Interval*9/10 {
			continue
		}
		_, err = s.runLocked(ctx, t, s.syncer(t, client), app, TriggerSchedule)
		if errors.Is(err, ErrAlreadyRunning) {
			log.Debug("scheduled sync skipped: a run of the app is in flight", "app_id", app)
		}
		// Other errors are the run's: Execute logged and recorded them.
	}
}
