package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader"
)

// adsSetup is the advertising setup service on a process's clients: the admin API's, and the
// command line's.
func (a *app) adsSetup(in *infra, store *controlplane.Store, log *slog.Logger) (*uploader.Setup, error) {
	keys, err := a.keyring()
	if err != nil {
		return nil, err
	}
	return uploader.NewSetup(uploader.SetupDeps{Config: a.cfg.Uploader.ConnectConfig, BaseURL: a.cfg.HTTP.BaseURL, Store: store, Keys: keys,
		Redis: in.redis, KeyPrefix: a.cfg.Redis.KeyPrefix, Logger: log})
}

// adsAPI is the admin API's advertising routes: the setup, the upload queue's rows and the
// verification order.
func (a *app) adsAPI(in *infra, store *controlplane.Store, rows *uploader.Rows, log *slog.Logger) (*adminapi.AdsAPI, error) {
	setup, err := a.adsSetup(in, store, log)
	if err != nil {
		return nil, err
	}
	return &adminapi.AdsAPI{Setup: setup, Rows: rows, Verifier: &adminapi.AdsVerifier{CH: in.clickhouse, Setup: setup}, Audit: store, Log: log}, nil
}

// uploadService is the upload component: the queue consumer, the dispatcher and the diagnostics
// poller, reading connections (and their sealed refresh tokens) and mappings from the control plane.
func (a *app) uploadService(in *infra, store *controlplane.Store, reg prometheus.Registerer, log *slog.Logger) (*uploader.Service, error) {
	keys, err := a.keyring()
	if err != nil {
		return nil, err
	}
	return uploader.New(a.cfg.Uploader, uploader.Deps{ClickHouse: in.clickhouse, Redis: in.redis, RedisPrefix: a.cfg.Redis.KeyPrefix,
		Kafka: a.cfg.Kafka, Producer: in.producer, Credentials: store.AdConnections(keys), Mappings: store.AdMappings(),
		Registry: reg, Log: log})
}

// adsEnv is what an `admin ads` command works with.
type adsEnv struct {
	store *controlplane.Store
	setup *uploader.Setup
	in    *infra
	// ws is the workspace named on the command line (zero for `callback`, whose state names it).
	ws controlplane.Workspace
}

// withAds opens ClickHouse and Redis (no Kafka) and runs f with the advertising setup, for the
// workspace slug ("" for none).
func (a *app) withAds(cmd *cobra.Command, slug string, f func(ctx context.Context, e adsEnv) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	in, err := a.openInfra(ctx, false, nil)
	if err != nil {
		return err
	}
	defer in.close(context.WithoutCancel(ctx))
	e := adsEnv{store: controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix), in: in}
	if e.setup, err = a.adsSetup(in, e.store, a.log); err != nil {
		return err
	}
	if slug != "" {
		if e.ws, err = e.store.WorkspaceBySlug(ctx, slug); err != nil {
			return err
		}
	}
	return f(ctx, e)
}

// adsCommand is one `admin ads` subcommand whose first argument is the workspace slug and whose
// result is printed as JSON.
func (a *app) adsCommand(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, e adsEnv, args []string) (any, error)) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(c *cobra.Command, args []string) error {
			return a.withAds(c, args[0], func(ctx context.Context, e adsEnv) error {
				v, err := run(ctx, e, args[1:])
				if err != nil {
					return err
				}
				return a.printJSON(v)
			})
		}}
}

// adsCommands mirror the admin API's advertising routes (docs/ADS_UPLOAD.md). Changes are audited
// as the command line's operator.
func (a *app) adsCommands() *cobra.Command {
	cmd := &cobra.Command{Use: "ads", Short: "Advertising-conversion upload: connection, mappings, upload queue, verification"}

	connect := a.adsCommand("connect SLUG", "Start connecting the workspace's Google Ads account: prints the consent URL to open in a browser; "+
		"finish with `ads callback` and the URL Google redirects the browser to",
		cobra.ExactArgs(1), func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			u, err := e.setup.Connect(ctx, adminActor, e.ws.ID)
			if err != nil {
				return nil, err
			}
			return map[string]string{"authorizationUrl": u, "redirectUrl": a.cfg.Uploader.RedirectURL(a.cfg.HTTP.BaseURL)}, nil
		})

	callback := &cobra.Command{Use: "callback URL", Args: cobra.ExactArgs(1),
		Short: "Finish a connection `ads connect` started, with the URL Google redirected the browser to",
		RunE: func(c *cobra.Command, args []string) error {
			u, err := url.Parse(args[0])
			if err != nil {
				return fmt.Errorf("callback URL: %w", err)
			}
			q := u.Query()
			return a.withAds(c, "", func(ctx context.Context, e adsEnv) error {
				if q.Get("error") != "" {
					_, _ = e.setup.Callback(ctx, q.Get("state"), "") // spend the state
					return fmt.Errorf("Google did not grant access (%s): start the connection again", q.Get("error"))
				}
				res, err := e.setup.Callback(ctx, q.Get("state"), q.Get("code"))
				if err != nil {
					return err
				}
				if res.Pending != nil {
					// Another Google account than the live connection's: nothing replaced until confirmed.
					return a.printJSON(map[string]any{"replacement": res.Pending,
						"next": "revtrack admin ads confirm-replacement " + res.Pending.ID + " (or --keep), before " + res.Pending.ExpiresAt.Format(time.RFC3339)})
				}
				return a.printJSON(res.Connection)
			})
		}}

	var keep bool
	confirmReplacement := &cobra.Command{Use: "confirm-replacement ID", Args: cobra.ExactArgs(1),
		Short: "Replace the live connection's Google account with the one `ads callback` held (--keep drops it instead)",
		RunE: func(c *cobra.Command, args []string) error {
			return a.withAds(c, "", func(ctx context.Context, e adsEnv) error {
				conn, err := e.setup.ConfirmReplacementOperator(ctx, args[0], !keep)
				if err != nil {
					return err
				}
				return a.printJSON(map[string]any{"connection": conn, "replaced": !keep})
			})
		}}
	confirmReplacement.Flags().BoolVar(&keep, "keep", false, "keep the live connection and drop the held grant")

	status := a.adsCommand("status SLUG", "Show the workspace's advertising connection (never the token)", cobra.ExactArgs(1),
		func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			return adminapi.DescribeConnection(ctx, e.setup, e.ws.ID)
		})

	var customer, login string
	selectAccount := a.adsCommand("select-account SLUG", "Select the conversion customer (and the manager login customer it is reached through)",
		cobra.ExactArgs(1), func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			return e.setup.SelectAccount(ctx, adminActor, e.ws.ID, customer, login)
		})
	selectAccount.Flags().StringVar(&customer, "customer", "", "10-digit ID of the account that owns the conversion actions")
	selectAccount.Flags().StringVar(&login, "login-customer", "", "10-digit ID of the manager account the conversion account is reached through (optional)")
	_ = selectAccount.MarkFlagRequired("customer")

	refresh := a.adsCommand("refresh-actions SLUG", "List the conversion account's uploadable conversion actions from Google again",
		cobra.ExactArgs(1), func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			return nonNil(e.setup.RefreshActions(ctx, adminActor, e.ws.ID))
		})
	actions := a.adsCommand("actions SLUG", "List the cached conversion actions of the conversion account", cobra.ExactArgs(1),
		func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			return nonNil(e.setup.ListActions(ctx, e.ws.ID))
		})

	disconnect := a.adsCommand("disconnect SLUG", "Revoke the credential at Google and disconnect (mappings are disabled, kept for audit)",
		cobra.ExactArgs(1), func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			conn, err := e.setup.Disconnect(ctx, adminActor, e.ws.ID)
			if errors.Is(err, uploader.ErrRevocationUnconfirmed) {
				return nil, fmt.Errorf("%w (the connection is still connected)", err)
			}
			return conn, err
		})

	var mappingFilter string
	verify := a.adsCommand("verify SLUG", "Follow the recommended verification order for each mapping (or --mapping)", cobra.ExactArgs(1),
		func(ctx context.Context, e adsEnv, _ []string) (any, error) {
			v := &adminapi.AdsVerifier{CH: e.in.clickhouse, Setup: e.setup}
			return v.Verify(ctx, e.ws.ID, mappingFilter)
		})
	verify.Flags().StringVar(&mappingFilter, "mapping", "", "only this mapping")

	cmd.AddCommand(connect, callback, confirmReplacement, status, selectAccount, refresh, actions, disconnect, a.adsMappingCommands(), a.adsQueueCommands(), verify)
	return cmd
}

// nonNil prints an empty list as [] rather than null.
func nonNil[T any](xs []T, err error) ([]T, error) {
	if xs == nil {
		xs = []T{}
	}
	return xs, err
}
