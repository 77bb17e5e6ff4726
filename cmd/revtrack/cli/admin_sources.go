package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
)

// sourceCommands manage tracking sources; a private key is printed only when it is created.
func (a *app) sourceCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "source", Short: "Tracking sources and their keys"}
	var appID, name string
	var origins []string
	create := &cobra.Command{Use: "create SLUG", Short: "Create a tracking source for a selected app; prints the private key once", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				src, sk, err := s.CreateSource(ctx, adminActor, args[0], appID, name, origins)
				if err != nil {
					return err
				}
				return a.printJSON(map[string]any{"source": src, "privateKey": sk, "note": "shown once; only its SHA-256 is stored"})
			})
		}}
	create.Flags().StringVar(&appID, "app", "", "the selected app the source belongs to")
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringSliceVar(&origins, "origins", nil, "exact allowed origins, e.g. https://app.example.com (http only for localhost/127.0.0.1)")

	list := &cobra.Command{Use: "list SLUG", Short: "List a workspace's tracking sources", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withSource(c, args[0], "", func(ctx context.Context, s *controlplane.Store, ws string, _ string) (any, error) {
				return s.Sources(ctx, ws)
			})
		}}
	enable := a.sourceAction("enable", "Enable a source", func(ctx context.Context, s *controlplane.Store, ws, id string) (any, error) {
		return s.SetSourceEnabled(ctx, adminActor, ws, id, true)
	})
	disable := a.sourceAction("disable", "Disable a source: new events are refused, stored events are kept until retention ends",
		func(ctx context.Context, s *controlplane.Store, ws, id string) (any, error) {
			return s.SetSourceEnabled(ctx, adminActor, ws, id, false)
		})
	rotatePK := a.sourceAction("rotate-public-key", "Replace the public key; the old one stops working at once",
		func(ctx context.Context, s *controlplane.Store, ws, id string) (any, error) {
			old, err := s.SourceByID(ctx, ws, id)
			if err != nil {
				return nil, err
			}
			src, err := s.RotatePublicKey(ctx, adminActor, ws, id)
			if err != nil {
				return nil, err
			}
			// As the admin API does: pages still sending the old key show on the source's status. The
			// rotation stands either way, so a failure here is only reported.
			if err := s.RetirePublicKey(ctx, old.PublicKey, id); err != nil {
				a.log.Warn("rotated public key not remembered; its refusals will not show on the source's status", "err", err)
			}
			return src, nil
		})
	rotateSK := a.sourceAction("rotate-private-key", "Replace the private key (printed once); the old one stops working at once",
		func(ctx context.Context, s *controlplane.Store, ws, id string) (any, error) {
			src, sk, err := s.RotatePrivateKey(ctx, adminActor, ws, id)
			return map[string]any{"source": src, "privateKey": sk, "note": "shown once; only its SHA-256 is stored"}, err
		})
	var setOrigins []string
	originsCmd := a.sourceAction("set-origins", "Replace the exact allowed origins",
		func(ctx context.Context, s *controlplane.Store, ws, id string) (any, error) {
			return s.SetSourceOrigins(ctx, adminActor, ws, id, setOrigins)
		})
	originsCmd.Flags().StringSliceVar(&setOrigins, "origins", nil, "exact allowed origins")
	cmd.AddCommand(create, list, enable, disable, rotatePK, rotateSK, originsCmd)
	return cmd
}

type sourceFunc func(ctx context.Context, s *controlplane.Store, workspaceID, sourceID string) (any, error)

func (a *app) sourceAction(use, short string, f sourceFunc) *cobra.Command {
	return &cobra.Command{Use: use + " SLUG SOURCE_ID", Short: short, Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error { return a.withSource(c, args[0], args[1], f) }}
}

// withSource resolves the workspace slug and prints what f returns.
func (a *app) withSource(c *cobra.Command, slug, id string, f sourceFunc) error {
	return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
		w, err := s.WorkspaceBySlug(ctx, slug)
		if err != nil {
			return err
		}
		v, err := f(ctx, s, w.ID, id)
		if err != nil {
			return err
		}
		return a.printJSON(v)
	})
}
