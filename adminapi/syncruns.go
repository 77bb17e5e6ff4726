package adminapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/query/syncruns"
)

// SyncService starts platform sync runs (*platformsync.Service): the writer's command side. The
// routes read runs through RunReader, not through the writer.
type SyncService interface {
	Start(ctx context.Context, workspaceID string, appIDs []string, trigger string) (platformsync.Started, error)
}

// RunReader lists sync runs (query/syncruns.Store, the read side of sync_runs).
type RunReader interface {
	List(ctx context.Context, workspaceID, appID string, limit int) ([]syncruns.RunRecord, error)
}

// Auditor records control-plane actions (*controlplane.Store).
type Auditor interface {
	Audit(ctx context.Context, e controlplane.AuditEntry) error
}

var (
	_ SyncService = (*platformsync.Service)(nil)
	_ RunReader   = syncruns.Store{}
	_ Auditor     = (*controlplane.Store)(nil)
)

// startedRuns is the answer to POST /sync-runs: each run begun, as GET /sync-runs lists it.
type startedRuns struct {
	Runs           []syncruns.RunRecord `json:"runs"`
	AlreadyRunning []string             `json:"alreadyRunning"`
}

type startRunsRequest struct {
	// AppID limits the run to one selected app; empty runs every selected app.
	AppID string `json:"appId"`
}

// startRuns answers 202 as soon as each run's row is written: a sync can take minutes (hours for a
// first backfill), so the runs go on in the background and GET /sync-runs shows their progress.
// 409 when every requested app already has a run in flight.
func (h syncHandlers) startRuns(c *gin.Context) {
	var req startRunsRequest
	if err := bindOptional(c, &req); err != nil {
		h.fail(c, err)
		return
	}
	caller := authn.From(c)
	var apps []string
	if req.AppID != "" {
		apps = []string{req.AppID}
	}
	ctx := c.Request.Context()
	started, err := h.Syncs.Start(ctx, caller.Workspace.ID, apps, platformsync.TriggerManual)
	if err != nil {
		h.fail(c, syncError(err))
		return
	}
	out := startedRuns{Runs: make([]syncruns.RunRecord, 0, len(started.Runs)), AlreadyRunning: started.AlreadyRunning}
	ids, runApps := make([]string, 0, len(started.Runs)), make([]string, 0, len(started.Runs))
	for _, r := range started.Runs {
		out.Runs = append(out.Runs, syncruns.Record(r.AppID, r.SyncRun))
		ids, runApps = append(ids, r.RunID), append(runApps, r.AppID)
	}
	// The runs have started whatever the audit write does; a failed write is logged, not answered.
	if err := h.Audit.Audit(context.WithoutCancel(ctx), controlplane.AuditEntry{WorkspaceID: caller.Workspace.ID, Actor: caller.Actor(),
		Action: "sync_run.start", TargetType: "sync_run", TargetID: strings.Join(ids, ","),
		Details: map[string]string{"appIds": strings.Join(runApps, ","), "alreadyRunning": strings.Join(started.AlreadyRunning, ",")}}); err != nil {
		h.Log.Error("audit of started sync runs failed", "run_ids", ids, "err", err)
	}
	c.JSON(http.StatusAccepted, out)
}

func (h syncHandlers) listRuns(c *gin.Context) {
	limit, err := limitParam(c, 20, syncruns.MaxRunsLimit)
	if err != nil {
		h.fail(c, err)
		return
	}
	runs, err := h.Runs.List(c.Request.Context(), authn.From(c).Workspace.ID, c.Query("appId"), limit)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"runs": runs})
}

// mappedError gives a sync error the control-plane sentinel that picks its status, keeping its
// own message.
type mappedError struct{ status, err error }

func (m mappedError) Error() string   { return m.err.Error() }
func (m mappedError) Unwrap() []error { return []error{m.status, m.err} }

func syncError(err error) error {
	switch {
	case errors.Is(err, platformsync.ErrAlreadyRunning):
		return mappedError{controlplane.ErrConflict, err}
	case errors.Is(err, platformsync.ErrNotConnected):
		return mappedError{controlplane.ErrConflict, errors.New(err.Error() + "; connect it with PUT /api/admin/partner-connection")}
	case errors.Is(err, platformsync.ErrAppNotSelected), errors.Is(err, platformsync.ErrNoApps):
		return mappedError{controlplane.ErrInvalid, err}
	}
	return err
}
