// Package devcli is the revtrack-dev command line: the development tools `make run` starts beside
// revtrack (the partner API fake, the Google fake, the demo page) and the seeding of the demo
// workspace from the partner fake's catalogue. They are a binary of their own so that the production
// binary carries no fake (docs/ARCHITECTURE.md).
package devcli

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/cmd/revtrack/config"
)

// app carries what every subcommand shares once flags are parsed.
type app struct {
	cfg config.Config
	log *slog.Logger
	out io.Writer
}

// New returns the root command writing results to out and logs to logOut. It takes revtrack's own
// configuration (flags and REVTRACK_* variables), so the tools and the service `make run` starts
// read the same ClickHouse, Redis, base URL and encryption keys.
func New(out, logOut io.Writer) *cobra.Command {
	a := &app{cfg: config.Default(), out: out}
	root := &cobra.Command{
		Use:           "revtrack-dev",
		Short:         "Development tools for a local revtrack: platform fakes, the demo page, the demo workspace",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) (err error) {
			a.log, err = a.cfg.Load(cmd.Flags(), logOut)
			return err
		},
	}
	root.SetOut(out)
	root.SetErr(logOut)
	a.cfg.RegisterFlags(root.PersistentFlags())
	root.AddCommand(a.partnerAPICommand(), a.googleAPICommand(), a.demoPageCommand(), a.seedDemoCommand(), a.seedTrackingCommand())
	return root
}

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, args []string, out, logOut io.Writer) int {
	root := New(out, logOut)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(logOut, "revtrack-dev:", err)
		return 1
	}
	return 0
}
