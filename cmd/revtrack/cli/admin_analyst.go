package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/analystaccess"
	"github.com/revtrack/revtrack/internal/redisx"
)

// analystCommands manage the per-workspace ClickHouse users of analysts (docs/ANALYSTS.md). The
// operator-wide user that reads every workspace (analyst_all_workspaces) is deployment
// configuration, not managed here.
func (a *app) analystCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "analyst", Short: "Per-workspace analyst access to ClickHouse (a user that reads only its workspace's copy)"}
	grant := &cobra.Command{Use: "grant SLUG",
		Short: "Create the workspace's analyst user, or rotate its password when it exists; prints the password once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withAnalysts(c, func(ctx context.Context, m *analystaccess.Manager, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				g, err := m.Grant(ctx, adminActor, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(struct {
					analystaccess.Grant
					Note string `json:"note"`
				}{g, "the password is shown only now; a new grant replaces it"})
			})
		}}
	var all bool
	refresh := &cobra.Command{Use: "refresh [SLUG]",
		Short: "Copy the workspace's current rows into its analyst database (--all: every workspace with access; run it on a schedule)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return fmt.Errorf("%w: give a workspace slug or --all", controlplane.ErrInvalid)
			}
			return a.withAnalysts(c, func(ctx context.Context, m *analystaccess.Manager, s *controlplane.Store) error {
				if all {
					n, err := m.RefreshAll(ctx)
					a.log.Info("analyst copies refreshed", "workspaces", n)
					return err
				}
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				acc, err := m.Refresh(ctx, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(acc)
			})
		}}
	refresh.Flags().BoolVar(&all, "all", false, "every workspace with analyst access")
	revoke := &cobra.Command{Use: "revoke SLUG", Short: "Remove the workspace's analyst user and its database",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withAnalysts(c, func(ctx context.Context, m *analystaccess.Manager, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				return m.Revoke(ctx, adminActor, w.ID)
			})
		}}
	show := &cobra.Command{Use: "show SLUG", Short: "The workspace's analyst user, database and times (never the password)",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withAnalysts(c, func(ctx context.Context, m *analystaccess.Manager, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				acc, err := m.Get(ctx, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(acc)
			})
		}}
	list := &cobra.Command{Use: "list", Short: "Every workspace's analyst access", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.withAnalysts(c, func(ctx context.Context, m *analystaccess.Manager, _ *controlplane.Store) error {
				l, err := m.List(ctx)
				if err != nil {
					return err
				}
				return a.printJSON(l)
			})
		}}
	cmd.AddCommand(grant, refresh, revoke, show, list)
	return cmd
}

// withAnalysts opens ClickHouse and Redis and runs f with an analyst-access manager. A refresh of
// every workspace can take long, hence the generous bound.
func (a *app) withAnalysts(cmd *cobra.Command, f func(ctx context.Context, m *analystaccess.Manager, s *controlplane.Store) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), time.Hour)
	defer cancel()
	in, err := a.openInfra(ctx, false, nil)
	if err != nil {
		return err
	}
	defer in.close(context.WithoutCancel(ctx))
	s := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix)
	return f(ctx, a.analystManager(in, s), s)
}

// analystManager is the analyst-access manager on a process's connections (the admin API's too).
func (a *app) analystManager(in *infra, s *controlplane.Store) *analystaccess.Manager {
	return &analystaccess.Manager{Conn: in.clickhouse, ClickHouse: a.cfg.ClickHouse, Audit: s,
		Locker: redisx.Locker{Client: in.redis, Prefix: a.cfg.Redis.KeyPrefix}, Log: a.log.With("component", "analyst-access")}
}
