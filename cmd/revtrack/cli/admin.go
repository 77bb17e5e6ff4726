package cli

import (
	"context"
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
)

// adminActor names the operator in the audit log for changes made from the command line.
const adminActor = "cli:admin"

func (a *app) adminCommand() *cobra.Command {
	admin := &cobra.Command{Use: "admin", Short: "Manage workspaces, members, apps and API keys"}
	admin.AddCommand(a.workspaceCommands(), a.memberCommands(), a.appCommands(), a.keyCommands(), a.sourceCommands(), a.trackingCommands(), a.auditCommand())
	admin.AddCommand(a.partnerCommands(), a.syncCommands(), a.customerCommands(), a.reportingCommands())
	admin.AddCommand(a.adsCommands(), a.resealCommand())
	admin.AddCommand(a.analystCommands())
	admin.AddCommand(a.userCommands())
	return admin
}

// withStore opens ClickHouse and Redis (no Kafka) and runs f with a control-plane store.
func (a *app) withStore(cmd *cobra.Command, f func(ctx context.Context, s *controlplane.Store) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	in, err := a.openInfra(ctx, false, nil)
	if err != nil {
		return err
	}
	defer in.close(context.WithoutCancel(ctx))
	return f(ctx, controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix))
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *app) workspaceCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Workspaces"}
	var name, status string
	var apps []string
	create := &cobra.Command{Use: "create SLUG", Short: "Create a workspace", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.CreateWorkspace(ctx, adminActor, args[0], name, status)
				if err != nil {
					return err
				}
				if len(apps) > 0 {
					if w, err = s.SetSelectedApps(ctx, adminActor, w.Slug, apps); err != nil {
						return err
					}
				}
				return a.printJSON(w)
			})
		}}
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringVar(&status, "status", controlplane.StatusActive, "subscription status: active, trialing, past_due, canceled or inactive")
	create.Flags().StringSliceVar(&apps, "apps", nil, "selected app IDs")

	list := &cobra.Command{Use: "list", Short: "List workspaces", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				ws, err := s.Workspaces(ctx)
				if err != nil {
					return err
				}
				return a.printJSON(ws)
			})
		}}

	var selApps []string
	selectApps := &cobra.Command{Use: "select-apps SLUG", Short: "Replace the workspace's selected apps", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.SetSelectedApps(ctx, adminActor, args[0], selApps)
				if err != nil {
					return err
				}
				return a.printJSON(w)
			})
		}}
	selectApps.Flags().StringSliceVar(&selApps, "apps", nil, "app IDs (replaces the current selection)")

	setStatus := &cobra.Command{Use: "set-status SLUG STATUS", Short: "Set the subscription status", Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.SetSubscriptionStatus(ctx, adminActor, args[0], args[1])
				if err != nil {
					return err
				}
				return a.printJSON(w)
			})
		}}
	cmd.AddCommand(create, list, selectApps, setStatus)
	return cmd
}

func (a *app) memberCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "member", Short: "Workspace members and roles"}
	put := &cobra.Command{Use: "put SLUG EMAIL ROLE", Short: "Add a member or change their role (owner, admin, member)", Args: cobra.ExactArgs(3),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				m, err := s.PutMember(ctx, adminActor, args[0], args[1], args[2])
				if err != nil {
					return err
				}
				return a.printJSON(m)
			})
		}}
	list := &cobra.Command{Use: "list SLUG", Short: "List members", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				ms, err := s.Members(ctx, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(ms)
			})
		}}
	cmd.AddCommand(put, list)
	return cmd
}

func (a *app) appCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Platform apps"}
	var platformID string
	put := &cobra.Command{Use: "put ID NAME", Short: "Register or rename an app", Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				app := controlplane.App{ID: args[0], Name: args[1], PlatformAppID: platformID}
				if err := s.PutApp(ctx, adminActor, app); err != nil {
					return err
				}
				return a.printJSON(app)
			})
		}}
	put.Flags().StringVar(&platformID, "platform-id", "", "the app's ID on the platform (gid://partners/App/...)")
	list := &cobra.Command{Use: "list", Short: "List apps", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				apps, err := s.Apps(ctx)
				if err != nil {
					return err
				}
				return a.printJSON(apps)
			})
		}}
	cmd.AddCommand(put, list)
	return cmd
}

func (a *app) keyCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Workspace API keys"}
	var name, scope string
	create := &cobra.Command{Use: "create SLUG", Short: "Create an API key; the key is printed once", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				plain, k, err := s.CreateAPIKey(ctx, adminActor, args[0], name, scope)
				if err != nil {
					return err
				}
				return a.printJSON(struct {
					controlplane.APIKey
					Key  string `json:"key"`
					Note string `json:"note"`
				}{k, plain, "shown once; only its SHA-256 is stored"})
			})
		}}
	create.Flags().StringVar(&name, "name", "", "what the key is for (one named key per integration)")
	create.Flags().StringVar(&scope, "scope", controlplane.ScopeRead, "read (reporting, MCP, ingestion) or admin (also the admin HTTP API)")
	list := &cobra.Command{Use: "list SLUG", Short: "List keys (never their values)", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				keys, err := s.APIKeys(ctx, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(keys)
			})
		}}
	revoke := &cobra.Command{Use: "revoke KEY_ID", Short: "Revoke a key; it stops working at once everywhere", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				k, err := s.RevokeAPIKey(ctx, adminActor, args[0])
				if err != nil {
					return err
				}
				return a.printJSON(k)
			})
		}}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func (a *app) auditCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{Use: "audit SLUG", Short: "Show a workspace's audit log, newest first", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withStore(c, func(ctx context.Context, s *controlplane.Store) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				log, err := s.AuditLog(ctx, w.ID, limit)
				if err != nil {
					return err
				}
				return a.printJSON(log)
			})
		}}
	cmd.Flags().IntVar(&limit, "limit", 50, "entries to show")
	return cmd
}
