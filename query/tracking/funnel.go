package tracking

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/revtrack/revtrack/query/budget"
)

// Funnel dimensions: what the acquisitions are grouped by, all from the acquisition's side. The
// first-touch channels are those of attribution (docs/METRICS.md 10), with the same values.
const (
	DimensionSource      = "source"        // the source that captured the acquisition
	DimensionTrackerRef  = "tracker_ref"   // first-touch tracker_ref
	DimensionUTMCampaign = "utm_campaign"  // first-touch utm_campaign
	DimensionUTMSource   = "utm_source"    // first-touch utm_source
	DimensionUTMMedium   = "utm_medium"    // first-touch utm_medium
	DimensionClickIDType = "click_id_type" // gclid, gbraid, wbraid or none: the first of them the first touch carried
	DimensionLandingPath = "landing_path"  // the first landing URL's path ("/" without one, "" without a URL)
)

// FunnelSteps are the steps of the sequential journey, in order.
var FunnelSteps = []string{"page_view", "install", "trial_started", "trial_converted", "paid"}

// Window bounds.
const (
	DefaultFunnelWindow = 30 * 24 * time.Hour
	MaxFunnelWindow     = 180 * 24 * time.Hour // raw tracking events are kept 180 days
)

// FunnelFilter selects a funnel.
type FunnelFilter struct {
	Scope
	// SourceID restricts the cohort to acquisitions captured by one source (optional).
	SourceID string `json:"sourceId,omitempty"`
	// Dimension is source (default) or a first-touch channel (the Dimension* constants).
	Dimension string `json:"dimension"`
	// From and To bound the acquisitions' first browser event, [From, To); zero values default to
	// the last 30 days.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Window is how long after its first browser event an acquisition's server events count;
	// 0 means 30 days, at most 180 days.
	Window time.Duration `json:"-"`
}

// FunnelStep is how many acquisitions of a group reached a step.
type FunnelStep struct {
	Name         string `json:"name"`
	Acquisitions uint64 `json:"acquisitions"`
}

// FunnelGroup is the journey of one group's acquisitions.
type FunnelGroup struct {
	// Key is the group's value; "" groups acquisitions without one (shown as "(none)").
	Key   string       `json:"key"`
	Steps []FunnelStep `json:"steps"`
	// Qualified counts acquisitions with a qualified event: reported beside the journey, not a step.
	Qualified uint64 `json:"qualified"`
}

// Funnel is the sequential journey per group.
type Funnel struct {
	Dimension string    `json:"dimension"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	// WindowSeconds is the window applied (FunnelFilter.Window).
	WindowSeconds int64         `json:"windowSeconds"`
	Groups        []FunnelGroup `json:"groups"`
}

// Funnel computes the sequential journey page_view → install → trial_started → trial_converted →
// paid per group of acquisitions. The exact rule:
//
//   - Cohort: acquisitions of the workspace (optionally of one source) whose first browser event
//     is in [From, To) and that have at least one page view. They all reach page_view, at their
//     first browser event ("first seen"). The unit is the acquisition (one browser of one source),
//     grouped by its source or its first touch.
//   - Eligible server events: funnel_events (one row per event ID: duplicates count once)
//     attributed to the acquisition, named install, trial_started, trial_converted, paid or
//     qualified, and occurring before first seen + Window. `identified` is never eligible: it
//     links history to a shop and is not a conversion (nor are canceled, churned, refunded).
//   - Events carrying the acquisition's own ID count even if stamped before first seen: the ID is
//     created by the browser's first page view, so an earlier time can only be clock skew between
//     the browser and the customer's server. So an install "before" the first page view still
//     reaches install, and page_view stays at the first page view.
//   - Events attributed through a shop link (they named only the shop) count only at or after
//     first seen: such an event before the browser was first seen is the shop's own earlier
//     history (an `identified` link to an existing shop brings no new install or payment).
//   - Order: install is reached at the earliest eligible install; each later step at the earliest
//     eligible event of its name at or after the time the previous step was reached (to the
//     millisecond; same-instant events count in step order). A step without its predecessor is
//     not reached, so counts never increase along the journey: paying without a trial does not
//     reach paid. This is ClickHouse's windowFunnel rule with the window anchored at first seen,
//     written with array functions so that ties are ordered and times keep their milliseconds.
//   - Qualified: acquisitions of the group with an eligible qualified event, whatever their step.
//
// Groups are ordered by key.
func (s *Store) Funnel(ctx context.Context, f FunnelFilter) (Funnel, error) {
	if f.WorkspaceID == "" {
		return Funnel{}, invalid("workspaceId is required")
	}
	if f.Dimension == "" {
		f.Dimension = DimensionSource
	}
	column, ok := funnelGroupColumns[f.Dimension]
	if !ok {
		return Funnel{}, invalid("groupBy must be one of %s, %s, %s, %s, %s, %s or %s", DimensionSource, DimensionTrackerRef,
			DimensionUTMCampaign, DimensionUTMSource, DimensionUTMMedium, DimensionClickIDType, DimensionLandingPath)
	}
	if f.Window == 0 {
		f.Window = DefaultFunnelWindow
	}
	if f.Window < 0 || f.Window > MaxFunnelWindow {
		return Funnel{}, invalid("window must be positive and at most 180 days")
	}
	from, to, err := s.dateRange(f.From, f.To)
	if err != nil {
		return Funnel{}, err
	}
	if err := budget.Compute(ctx); err != nil {
		return Funnel{}, err
	}
	out := Funnel{Dimension: f.Dimension, From: from, To: to, WindowSeconds: int64(f.Window / time.Second), Groups: []FunnelGroup{}}

	q, args := funnelQuery(f, column, from, to)
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return out, fmt.Errorf("read funnel: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			g      FunnelGroup
			counts [5]uint64
		)
		if err := rows.Scan(&g.Key, &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &g.Qualified); err != nil {
			return out, err
		}
		for i, name := range FunnelSteps {
			g.Steps = append(g.Steps, FunnelStep{Name: name, Acquisitions: counts[i]})
		}
		out.Groups = append(out.Groups, g)
	}
	return out, rows.Err()
}

// funnelQuery composes the funnel query; column comes from funnelGroupColumns (a constant, never
// input).
func funnelQuery(f FunnelFilter, column string, from, to time.Time) (string, []any) {
	windowMs := uint64(f.Window.Milliseconds())
	var q strings.Builder
	q.WriteString(funnelStart)
	q.WriteString(column)
	q.WriteString(funnelCohortRest)
	args := []any{windowMs, windowMs, f.WorkspaceID, f.apps()}
	if f.SourceID != "" {
		q.WriteString(andSourceID)
		args = append(args, f.SourceID)
	}
	q.WriteString(funnelCohortEnd)
	return q.String(), append(args, epoch(from), epoch(to), f.WorkspaceID, f.apps(), epoch(to.Add(f.Window)))
}
