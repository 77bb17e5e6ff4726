package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
)

// customerCommands manage a workspace's customer exclusions: shops kept out of its aggregate
// figures (docs/PLATFORM_DATA.md). Every change is audited as the command line's operator.
func (a *app) customerCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "customer", Short: "Customers kept out of a workspace's aggregate figures"}
	var slug, domain, appID, reason string
	var lifted bool
	rule := func(use, short string, f func(ctx context.Context, s *controlplane.Store, workspaceID string) (any, error)) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
					w, err := s.WorkspaceBySlug(ctx, slug)
					if err != nil {
						return err
					}
					v, err := f(ctx, s, w.ID)
					if err != nil {
						return err
					}
					return a.printJSON(v)
				})
			}}
		c.Flags().StringVar(&slug, "workspace", "", "workspace slug")
		_ = c.MarkFlagRequired("workspace")
		return c
	}
	exclude := rule("exclude", "Keep a shop out of the workspace's aggregate figures (every app, or --app)",
		func(ctx context.Context, s *controlplane.Store, ws string) (any, error) {
			return s.ExcludeCustomer(ctx, adminActor, ws, domain, appID, reason)
		})
	include := rule("include", "Lift an exclusion: the shop counts again",
		func(ctx context.Context, s *controlplane.Store, ws string) (any, error) {
			return s.IncludeCustomer(ctx, adminActor, ws, domain, appID, reason)
		})
	for _, c := range []*cobra.Command{exclude, include} {
		c.Flags().StringVar(&domain, "domain", "", "the shop's platform domain, e.g. alpha.myshopify.com")
		c.Flags().StringVar(&appID, "app", "", "one selected app (default: every app)")
		c.Flags().StringVar(&reason, "reason", "", "why, for the audit log and the list")
		_ = c.MarkFlagRequired("domain")
	}
	list := rule("list", "List the exclusions in force",
		func(ctx context.Context, s *controlplane.Store, ws string) (any, error) {
			xs, err := s.CustomerExclusions(ctx, ws, lifted)
			if xs == nil {
				xs = []controlplane.CustomerExclusion{}
			}
			return xs, err
		})
	list.Flags().BoolVar(&lifted, "lifted", false, "also list lifted exclusions")
	cmd.AddCommand(exclude, include, list)
	return cmd
}
