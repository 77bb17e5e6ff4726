package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// reportingCommands look after the copies that materialized views fill from the platform tables,
// and acquisition_clicks and acquisition_touches, which views fill from browser_events
// (docs/REPORTING_PERFORMANCE.md, "Existing databases").
func (a *app) reportingCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "reporting", Short: "The copies of the platform tables that reporting and the derivation read"}
	var slug string
	var dryRun bool
	backfill := &cobra.Command{Use: "backfill",
		Short: "Copy into the copies the rows their tables held before the copies existed, and summarise the browser events landed before acquisition_clicks and acquisition_touches (resumable; safe while landing runs)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if dryRun {
				a.cfg.AutoMigrate = false // the migrations' own settling of the copies writes too
			}
			in, err := a.openInfra(ctx, false, nil)
			if err != nil {
				return err
			}
			defer in.close(context.WithoutCancel(ctx))
			opts := reportingbackfill.Options{DryRun: dryRun, Out: a.out}
			if slug != "" {
				w, err := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix).WorkspaceBySlug(ctx, slug)
				if err != nil {
					return err
				}
				opts.WorkspaceID = w.ID
			}
			res, err := reportingbackfill.Run(ctx, in.clickhouse, opts)
			if err != nil {
				return err
			}
			incomplete := 0
			for _, cr := range res.Copies {
				incomplete += cr.Incomplete
			}
			if incomplete > 0 {
				return fmt.Errorf("%d parts still lack rows (rows landed while they were copied): run the backfill again", incomplete)
			}
			return nil
		}}
	backfill.Flags().StringVar(&slug, "workspace", "", "only this workspace (slug); such a run records no copy or summary complete")
	backfill.Flags().BoolVar(&dryRun, "dry-run", false, "report what lacks, write nothing (and skip the automatic migration)")
	cmd.AddCommand(backfill)
	return cmd
}
