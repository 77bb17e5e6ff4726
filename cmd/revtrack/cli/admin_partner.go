package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

func (a *app) keyring() (*controlplane.Keyring, error) {
	k, err := controlplane.ParseKeyring(a.cfg.EncryptionKeys)
	if err != nil {
		return nil, fmt.Errorf("encryption-keys: %w", err)
	}
	return k, nil
}

// withPartners runs f with the partner connections of a control-plane store (ClickHouse and Redis).
func (a *app) withPartners(cmd *cobra.Command, f func(ctx context.Context, s *controlplane.Store, p *controlplane.Partners) error) error {
	keys, err := a.keyring()
	if err != nil {
		return err
	}
	return a.withStore(cmd, func(ctx context.Context, s *controlplane.Store) error { return f(ctx, s, s.Partners(keys)) })
}

func (a *app) partnerCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "partner", Short: "Partner API connections (the token is stored sealed, never shown)"}
	var org, tokenEnv string
	connect := &cobra.Command{Use: "connect SLUG", Args: cobra.ExactArgs(1),
		Short: "Connect a workspace to its partner organization; the token is read from the environment variable --token-env names",
		RunE: func(c *cobra.Command, args []string) error {
			if tokenEnv == "" {
				return errors.New("--token-env is required: the name of an environment variable holding the access token")
			}
			token := os.Getenv(tokenEnv)
			if token == "" {
				return fmt.Errorf("environment variable %s is unset or empty", tokenEnv)
			}
			return a.withPartners(c, func(ctx context.Context, _ *controlplane.Store, p *controlplane.Partners) error {
				conn, err := p.ConnectPartner(ctx, adminActor, args[0], org, token)
				if err != nil {
					return err
				}
				if conn.SealedWithKey == controlplane.DevelopmentKeyID {
					a.log.Warn("partner token sealed with the published development key; set --encryption-keys outside local use")
				}
				return a.printJSON(conn)
			})
		}}
	connect.Flags().StringVar(&org, "org", "", "partner organization ID (digits)")
	connect.Flags().StringVar(&tokenEnv, "token-env", "", "NAME of the environment variable holding the access token (never the token itself)")
	_ = connect.MarkFlagRequired("org")
	_ = connect.MarkFlagRequired("token-env")

	show := &cobra.Command{Use: "show SLUG", Short: "Show a workspace's partner connection (never the token)", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withPartners(c, func(ctx context.Context, s *controlplane.Store, p *controlplane.Partners) error {
				w, err := s.WorkspaceBySlug(ctx, args[0])
				if err != nil {
					return err
				}
				conn, err := p.DescribePartner(ctx, w.ID)
				if err != nil {
					return err
				}
				return a.printJSON(conn)
			})
		}}

	disconnect := &cobra.Command{Use: "disconnect SLUG", Short: "Remove a workspace's partner connection", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.withPartners(c, func(ctx context.Context, _ *controlplane.Store, p *controlplane.Partners) error {
				return p.DisconnectPartner(ctx, adminActor, args[0])
			})
		}}

	// Kept under partner for existing runbooks; it re-seals every secret, as `admin reseal` does.
	reseal := a.resealCommand()
	reseal.Short = "Re-seal every stored secret (partner and advertising tokens) with the first --encryption-keys key (same as `admin reseal`)"

	cmd.AddCommand(connect, show, disconnect, reseal)
	return cmd
}

func (a *app) syncCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "sync", Short: "Platform data sync from the partner API (docs/PLATFORM_SYNC.md)"}
	var appID, version string
	var timeout time.Duration
	run := &cobra.Command{Use: "run SLUG", Args: cobra.ExactArgs(1),
		Short: "Sync the workspace's selected apps (or --app) now, one after another; prints each sync run as JSON",
		Long: "Runs under the same per-app lock as the scheduled sync: an app whose sync is already running " +
			"(here or in any other process) is reported as already running and not synced again.",
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), timeout)
			defer cancel()
			in, err := a.openInfra(ctx, true, nil)
			if err != nil {
				return err
			}
			defer in.close(context.WithoutCancel(ctx))
			s := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix)
			w, err := s.WorkspaceBySlug(ctx, args[0])
			if err != nil {
				return err
			}
			apps := w.SelectedAppIDs
			if appID != "" {
				apps = []string{appID}
			}
			if len(apps) == 0 {
				return fmt.Errorf("workspace %s has no selected apps", w.Slug)
			}
			if version != "" {
				a.cfg.PlatformSync.APIVersion = version
			}
			svc, err := a.syncService(in, s, nil, a.log)
			if err != nil {
				return err
			}
			var errs []error
			for _, id := range apps {
				run, err := svc.RunApp(ctx, w.ID, id, platformsync.TriggerManual)
				if clickhousex.BrokenConn(ctx, err) {
					// A pooled ClickHouse connection that died under a request (a driver fault seen
					// rarely, docs in internal/clickhousex/retry.go): a run resumes from its cursors,
					// so running the app once more is safe, and the next request dials afresh.
					a.log.Warn("sync failed on a broken ClickHouse connection; running the app once more", "app_id", id, "err", err)
					run, err = svc.RunApp(ctx, w.ID, id, platformsync.TriggerManual)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("app %s: %w", id, err))
				}
				if run.RunID == "" {
					continue // not started (already running, not selected, not connected)
				}
				if perr := a.printJSON(struct {
					WorkspaceID string `json:"workspaceId"`
					AppID       string `json:"appId"`
					schemas.SyncRun
				}{w.ID, id, run}); perr != nil {
					errs = append(errs, perr)
				}
			}
			return errors.Join(errs...)
		}}
	run.Flags().StringVar(&appID, "app", "", "sync only this selected app (revtrack app ID; the partner API is asked for its platform ID when one is registered)")
	run.Flags().StringVar(&version, "api-version", "", "partner API version (default: --platform-sync-api-version)")
	run.Flags().DurationVar(&timeout, "timeout", time.Hour, "give up after this long (the run ends failed and the next one resumes)")

	var limit int
	runs := &cobra.Command{Use: "runs SLUG", Args: cobra.ExactArgs(1),
		Short: "List the workspace's latest sync runs (or --app's), newest first, as JSON",
		Long: "A running run carries its live progress (records loaded, walk, instant reached, estimated time left), " +
			"read from Redis where the process running it publishes it.",
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), 2*time.Minute)
			defer cancel()
			in, err := a.openInfra(ctx, false, nil)
			if err != nil {
				return err
			}
			defer in.close(context.WithoutCancel(ctx))
			w, err := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix).WorkspaceBySlug(ctx, args[0])
			if err != nil {
				return err
			}
			rs, err := syncruns.Store{CH: in.clickhouse, Live: in.redis, Prefix: a.cfg.Redis.KeyPrefix, Log: a.log}.List(ctx, w.ID, appID, limit)
			if err != nil {
				return err
			}
			return a.printJSON(rs)
		}}
	runs.Flags().StringVar(&appID, "app", "", "only this app's runs")
	runs.Flags().IntVar(&limit, "limit", 20, fmt.Sprintf("most runs to list (1 to %d)", syncruns.MaxRunsLimit))
	cmd.AddCommand(run, runs)
	return cmd
}
