package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/tracking"
)

// trackingCommands read the Tracking view, troubleshooting state, funnel and ledger from the command
// line, with the same store and scoping as the REST API.
func (a *app) trackingCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "tracking", Short: "Read tracking data: recent events, source status, funnel, ledger"}
	var from, to, source, acquisition, groupBy string
	var limit, windowDays int
	rangeFlags := func(c *cobra.Command) {
		c.Flags().StringVar(&from, "from", "", "first day YYYY-MM-DD (default: 30 days before --to)")
		c.Flags().StringVar(&to, "to", "", "last day YYYY-MM-DD (default: today, UTC)")
	}
	var cp *controlplane.Store // the control plane of the running command, for the source's refusals
	run := func(c *cobra.Command, slug string, f func(ctx context.Context, st *tracking.Store, sc tracking.Scope, start, end time.Time) (any, error)) error {
		return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
			cp = s
			w, err := s.WorkspaceBySlug(ctx, slug)
			if err != nil {
				return err
			}
			start, end, err := dayRange(from, to)
			if err != nil {
				return err
			}
			v, err := f(ctx, tracking.New(s.Conn()), tracking.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}, start, end)
			if err != nil {
				return err
			}
			return a.printJSON(v)
		})
	}
	events := &cobra.Command{Use: "events SLUG", Short: "Recent browser and server events with their evidence badge", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return run(c, args[0], func(ctx context.Context, st *tracking.Store, sc tracking.Scope, start, end time.Time) (any, error) {
				return st.RecentEvents(ctx, tracking.Filter{Scope: sc, SourceID: source, AcquisitionID: acquisition, From: start, To: end, Limit: limit})
			})
		}}
	rangeFlags(events)
	events.Flags().StringVar(&source, "source", "", "only this tracking source")
	events.Flags().StringVar(&acquisition, "acquisition", "", "only this acquisition ID")
	events.Flags().IntVar(&limit, "limit", tracking.DefaultEventLimit, "events to show (1-200)")

	status := &cobra.Command{Use: "status SLUG SOURCE_ID", Short: "What a source received, and which troubleshooting conditions hold", Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return run(c, args[0], func(ctx context.Context, st *tracking.Store, sc tracking.Scope, start, _ time.Time) (any, error) {
				tr, err := st.Troubleshoot(ctx, sc, args[1], start)
				if err != nil {
					return nil, err
				}
				// What the edge refused for the source, as GET /api/v1/tracking/sources/{id}/status shows it.
				ref, err := cp.SourceRefusals(ctx, args[1])
				if err != nil {
					return nil, err
				}
				tr.ApplyRefusals(ref)
				return tr, nil
			})
		}}
	rangeFlags(status)

	funnel := &cobra.Command{Use: "funnel SLUG", Short: "The sequential journey page_view → install → trial_started → trial_converted → paid", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return run(c, args[0], func(ctx context.Context, st *tracking.Store, sc tracking.Scope, start, end time.Time) (any, error) {
				return st.Funnel(ctx, tracking.FunnelFilter{Scope: sc, SourceID: source, Dimension: groupBy, From: start, To: end,
					Window: time.Duration(windowDays) * 24 * time.Hour})
			})
		}}
	rangeFlags(funnel)
	funnel.Flags().StringVar(&source, "source", "", "only acquisitions of this source")
	funnel.Flags().StringVar(&groupBy, "group-by", tracking.DimensionSource, "source, tracker_ref or utm_campaign")
	funnel.Flags().IntVar(&windowDays, "window-days", 30, "days after the first page view in which events count (1-180)")

	ledger := &cobra.Command{Use: "ledger SLUG", Short: "Paid minus refunded per first-touch tracker_ref and currency", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return run(c, args[0], func(ctx context.Context, st *tracking.Store, sc tracking.Scope, start, end time.Time) (any, error) {
				return st.Ledger(ctx, sc, start, end)
			})
		}}
	rangeFlags(ledger)
	cmd.AddCommand(events, status, funnel, ledger)
	return cmd
}

// dayRange turns YYYY-MM-DD bounds into [from 00:00, to+1 00:00) UTC, defaulting to the last 30 days.
func dayRange(from, to string) (time.Time, time.Time, error) {
	end := time.Now().UTC().Truncate(24 * time.Hour)
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("--to must be YYYY-MM-DD")
		}
		end = t
	}
	start := end.AddDate(0, 0, -29)
	if from != "" {
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("--from must be YYYY-MM-DD")
		}
		start = t
	}
	return start, end.AddDate(0, 0, 1), nil
}
