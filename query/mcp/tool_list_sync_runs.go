package mcp

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/revtrack/revtrack/query/syncruns"
)

// ListSyncRunsArgs are list_sync_runs' arguments.
type ListSyncRunsArgs struct {
	AppID  string `json:"appId,omitempty" jsonschema:"minLength=1" jsonschema_description:"Only runs of this selected app. Default: every selected app."`
	Status string `json:"status,omitempty" jsonschema:"enum=running,enum=succeeded,enum=failed,enum=partial" jsonschema_description:"Only runs with this status. Default: any."`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100" jsonschema_description:"How many runs, newest first: 1 to 100. Default: 20."`
}

// ListSyncRunsResult is list_sync_runs' output: the runs as the admin API shows them.
type ListSyncRunsResult struct {
	Runs   []syncruns.RunRecord `json:"runs"`
	Source string               `json:"source"`
}

const (
	defaultSyncRunLimit = 20
	maxSyncRunLimit     = 100
)

const listSyncRunsDescription = "Recent runs of the platform sync that loads the reporting data, newest first, for the workspace's selected apps. " +
	"Each run: runId, appId, trigger (schedule or manual), status (running, succeeded, failed, partial), startedAt, finishedAt " +
	"(null while running), eventsCount and transactionsCount (records the run loaded), coverageFrom and coverageThrough " +
	"(the span of transaction history loaded after the run, RFC 3339 UTC instants), truncated (true when that history reached " +
	"its row limit and older transactions are not loaded), error (empty unless the run failed) and progress: null unless the run " +
	"is running, else its live progress (eventsCount and transactionsCount loaded so far, pages fetched, and the walk in progress: " +
	"step of steps, stream, direction forward or backward, from, reachedAt, target and estimatedSecondsLeft, null when not known). " +
	"A run marked running whose progress is null has stopped (its process died; the app's next run marks it failed). " +
	"Use it to explain a staleDataWarning, incomplete coverage or figures that look out of date; no tool triggers a sync."

func (t *tools) listSyncRuns() toolDef {
	return newTool(t, "list_sync_runs", "Platform sync runs", listSyncRunsDescription, nil, t.runListSyncRuns)
}

func (t *tools) runListSyncRuns(ctx context.Context, a ListSyncRunsArgs) (ListSyncRunsResult, error) {
	ci, err := caller(ctx)
	if err != nil {
		return ListSyncRunsResult{}, err
	}
	if a.Limit == 0 {
		a.Limit = defaultSyncRunLimit
	}
	w := ci.caller.Workspace
	// Only the selected apps: runs of an app the workspace no longer reports on are not its data.
	apps := w.SelectedAppIDs
	if a.AppID != "" {
		if !slices.Contains(apps, a.AppID) {
			return ListSyncRunsResult{}, invalidArgs("appId %q is not one of the workspace's selected apps (%s)", a.AppID, strings.Join(apps, ", "))
		}
		apps = []string{a.AppID}
	}
	perApp := a.Limit
	if a.Status != "" {
		perApp = syncruns.MaxRunsLimit // filtered below: read deep enough to fill the page
	}
	runs := []syncruns.RunRecord{}
	for _, app := range apps {
		rs, err := t.runs.List(ctx, w.ID, app, perApp)
		if err != nil {
			return ListSyncRunsResult{}, err
		}
		for _, r := range rs {
			if a.Status == "" || r.Status == a.Status {
				runs = append(runs, r)
			}
		}
	}
	slices.SortStableFunc(runs, func(x, y syncruns.RunRecord) int {
		return cmp.Or(y.StartedAt.Compare(x.StartedAt), cmp.Compare(y.RunID, x.RunID))
	})
	if len(runs) > a.Limit {
		runs = runs[:a.Limit]
	}
	return ListSyncRunsResult{Runs: runs, Source: "sync_runs"}, nil
}
