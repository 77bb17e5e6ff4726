package reporting

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// Sync streams whose cursors tell coverage (METRICS 7.1). Usage charges arrive through the
// lifecycle-event stream (USAGE_CHARGE_APPLIED), so its cursors cover them too.
const (
	streamTransactions    = "transactions"
	streamLifecycleEvents = "lifecycle_events"
	startSuffix           = ":start"
	cursorOrigin          = "origin"
	cursorRowLimit        = "row_limit"
)

// TransactionCoverage is the coverage of the transaction history (METRICS 7.2).
type TransactionCoverage struct {
	Complete        bool `json:"complete"`
	CoverageFrom    Date `json:"coverageFrom"`
	CoverageThrough Date `json:"coverageThrough"`
	Truncated       bool `json:"truncated"`
}

// StreamCoverage is the coverage of the lifecycle history and of observed usage charges.
type StreamCoverage struct {
	Complete        bool `json:"complete"`
	CoverageFrom    Date `json:"coverageFrom"`
	CoverageThrough Date `json:"coverageThrough"`
}

// UsageActivityCoverage says whether received usage events were read; complete is always null.
type UsageActivityCoverage struct {
	Source   string `json:"source"`
	Loaded   bool   `json:"loaded"`
	Complete *bool  `json:"complete"`
}

// AppCoverage is one covered app's sync state and coverage.
type AppCoverage struct {
	AppID                string              `json:"appId"`
	LastSuccessfulSyncAt Timestamp           `json:"lastSuccessfulSyncAt"`
	LastSyncStatus       *string             `json:"lastSyncStatus"`
	Transactions         TransactionCoverage `json:"transactions"`
	Lifecycle            StreamCoverage      `json:"lifecycle"`
	ObservedUsageCharges StreamCoverage      `json:"observedUsageCharges"`
}

// CoverageBlocks are METRICS 7's four blocks (the customer detail's coverage).
type CoverageBlocks struct {
	Transactions         TransactionCoverage   `json:"transactions"`
	Lifecycle            StreamCoverage        `json:"lifecycle"`
	ObservedUsageCharges StreamCoverage        `json:"observedUsageCharges"`
	UsageActivity        UsageActivityCoverage `json:"usageActivity"`
}

// Coverage is the summary's and the metrics' coverage: the blocks combined over the covered apps,
// and each app's own (METRICS 7.3; omitted when no app is covered).
type Coverage struct {
	CoverageBlocks
	Apps []AppCoverage `json:"apps,omitempty"`
}

const usageEventsSource = "received_usage_events"

// cursor is one stream cursor's latest value.
type cursor struct {
	Value     string
	WindowEnd time.Time
}

// syncState is one app's runs, reduced (selectSyncState).
type syncState struct {
	LastSuccess     time.Time // latest finished_at of a succeeded run
	FinishedStatus  string    // status of the latest run that is not running
	FinishedStarted time.Time
	LatestStatus    string // status of the latest run of any kind
}

// syncView is what the sync recorded for the covered apps.
type syncView struct {
	apps    []string
	cursors map[string]map[string]cursor
	runs    map[string]syncState
}

// readSyncView reads the cursors and the runs of the covered apps, concurrently.
func (s *Store) readSyncView(ctx context.Context, sc Scope) (*syncView, error) {
	v := &syncView{apps: slices.Sorted(slices.Values(sc.AppIDs)), cursors: map[string]map[string]cursor{}, runs: map[string]syncState{}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.readCursors(gctx, sc, v) })
	g.Go(func() error { return s.readRuns(gctx, sc, v) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return v, nil
}

func (s *Store) readCursors(ctx context.Context, sc Scope, v *syncView) error {
	rows, err := s.conn.Query(ctx, selectCursors, sc.WorkspaceID, sc.apps())
	if err != nil {
		return fmt.Errorf("read sync cursors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			app, stream, value string
			end                uint32
		)
		if err := rows.Scan(&app, &stream, &value, &end); err != nil {
			return fmt.Errorf("read sync cursors: %w", err)
		}
		if v.cursors[app] == nil {
			v.cursors[app] = map[string]cursor{}
		}
		v.cursors[app][stream] = cursor{Value: value, WindowEnd: unix(end)}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read sync cursors: %w", err)
	}
	return nil
}

func (s *Store) readRuns(ctx context.Context, sc Scope, v *syncView) error {
	runs, err := s.conn.Query(ctx, selectSyncState, sc.WorkspaceID, sc.apps())
	if err != nil {
		return fmt.Errorf("read sync runs: %w", err)
	}
	defer runs.Close()
	for runs.Next() {
		var (
			app                    string
			st                     syncState
			success, finishedStart uint32
		)
		if err := runs.Scan(&app, &success, &st.FinishedStatus, &finishedStart, &st.LatestStatus); err != nil {
			return fmt.Errorf("read sync runs: %w", err)
		}
		st.LastSuccess, st.FinishedStarted = unix(success), unix(finishedStart)
		v.runs[app] = st
	}
	return runs.Err()
}

// only is the view narrowed to one app (the detail's customer's).
func (v *syncView) only(app string) *syncView {
	return &syncView{apps: []string{app}, cursors: v.cursors, runs: v.runs}
}

// streamCoverage is METRICS 7.2 for one app's stream and a range ending on the reporting date.
func (v *syncView) streamCoverage(app, stream string, r Range) (StreamCoverage, bool) {
	fwd, okF := v.cursors[app][stream]
	start, okS := v.cursors[app][stream+startSuffix]
	var c StreamCoverage
	if okF {
		c.CoverageThrough = DateOf(fwd.WindowEnd)
	}
	origin := okS && start.Value == cursorOrigin
	if okS {
		c.CoverageFrom = DateOf(start.WindowEnd)
		if !origin && !start.WindowEnd.Equal(c.CoverageFrom.Start()) {
			c.CoverageFrom = c.CoverageFrom.AddDays(1) // the oldest date is only partly loaded
		}
	}
	c.Complete = okF && okS && (origin || !r.From.Before(c.CoverageFrom)) && !c.CoverageThrough.Before(r.To)
	return c, okS && start.Value == cursorRowLimit
}

// appCoverage is one app's blocks.
func (v *syncView) appCoverage(app string, r Range) AppCoverage {
	tx, truncated := v.streamCoverage(app, streamTransactions, r)
	life, _ := v.streamCoverage(app, streamLifecycleEvents, r)
	a := AppCoverage{AppID: app, Transactions: TransactionCoverage{Complete: tx.Complete, CoverageFrom: tx.CoverageFrom,
		CoverageThrough: tx.CoverageThrough, Truncated: truncated}, Lifecycle: life, ObservedUsageCharges: life}
	if st, ok := v.runs[app]; ok {
		a.LastSuccessfulSyncAt = Timestamp(st.LastSuccess)
		status := st.LatestStatus
		a.LastSyncStatus = &status
	}
	return a
}

// coverage combines the covered apps (METRICS 7.3): coverageFrom the latest, coverageThrough the
// earliest (null if any app's is null), complete when every app is, truncated when any is. Without
// a covered app nothing is covered.
func (v *syncView) coverage(r Range, activityLoaded bool) Coverage {
	c := Coverage{CoverageBlocks: CoverageBlocks{UsageActivity: UsageActivityCoverage{Source: usageEventsSource, Loaded: activityLoaded}}}
	apps := make([]AppCoverage, 0, len(v.apps))
	for _, app := range v.apps {
		apps = append(apps, v.appCoverage(app, r))
	}
	c.Apps = apps
	if len(apps) == 0 {
		return c
	}
	tx := func(a AppCoverage) StreamCoverage {
		return StreamCoverage{Complete: a.Transactions.Complete, CoverageFrom: a.Transactions.CoverageFrom, CoverageThrough: a.Transactions.CoverageThrough}
	}
	combinedTx := combine(apps, tx)
	c.Transactions = TransactionCoverage{Complete: combinedTx.Complete, CoverageFrom: combinedTx.CoverageFrom, CoverageThrough: combinedTx.CoverageThrough}
	for _, a := range apps {
		c.Transactions.Truncated = c.Transactions.Truncated || a.Transactions.Truncated
	}
	c.Lifecycle = combine(apps, func(a AppCoverage) StreamCoverage { return a.Lifecycle })
	c.ObservedUsageCharges = combine(apps, func(a AppCoverage) StreamCoverage { return a.ObservedUsageCharges })
	return c
}

func combine(apps []AppCoverage, get func(AppCoverage) StreamCoverage) StreamCoverage {
	out := StreamCoverage{Complete: true}
	nullFrom, nullThrough := false, false
	for i, a := range apps {
		s := get(a)
		out.Complete = out.Complete && s.Complete
		nullFrom = nullFrom || s.CoverageFrom.IsZero()
		nullThrough = nullThrough || s.CoverageThrough.IsZero()
		if i == 0 || s.CoverageFrom.After(out.CoverageFrom) {
			out.CoverageFrom = s.CoverageFrom
		}
		if i == 0 || s.CoverageThrough.Before(out.CoverageThrough) {
			out.CoverageThrough = s.CoverageThrough
		}
	}
	if nullFrom {
		out.CoverageFrom = Date{}
	}
	if nullThrough {
		out.CoverageThrough = Date{}
	}
	return out
}

// staleAfter is METRICS 8 condition 2.
const staleAfter = 24 * time.Hour

// staleDataWarning is METRICS 8: the sentences of the conditions that hold, by app, or nil.
func (v *syncView) staleDataWarning(generatedAt time.Time, r Range) *string {
	var sentences []string
	for _, app := range v.apps {
		st, ok := v.runs[app]
		if !ok || st.LastSuccess.IsZero() {
			sentences = append(sentences, fmt.Sprintf("No successful platform sync has finished for app %s; its figures are missing or partial.", app))
		} else if generatedAt.Sub(st.LastSuccess) > staleAfter {
			sentences = append(sentences, fmt.Sprintf("Platform data for app %s was last synced at %s, more than 24 hours before this response.",
				app, stamp(st.LastSuccess)))
		}
		if ok && (st.FinishedStatus == "failed" || st.FinishedStatus == "partial") {
			sentences = append(sentences, fmt.Sprintf("The latest platform sync for app %s, started at %s, ended with status %s.",
				app, stamp(st.FinishedStarted), st.FinishedStatus))
		}
		if a := v.appCoverage(app, r); a.Transactions.Truncated {
			sentences = append(sentences, fmt.Sprintf("Transaction history for app %s reached the row limit of 1,000,000 rows; transactions before %s are not loaded.",
				app, a.Transactions.CoverageFrom))
		}
	}
	if len(sentences) == 0 {
		return nil
	}
	w := strings.Join(sentences, " ")
	return &w
}
