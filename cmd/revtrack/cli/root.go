// Package cli is the revtrack command line: one binary whose subcommands run each component, all of
// them together, the migrations, and the admin tasks.
package cli

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

// New returns the root command writing results to out and logs to logOut.
func New(out, logOut io.Writer) *cobra.Command {
	a := &app{cfg: config.Default(), out: out}
	root := &cobra.Command{
		Use:           "revtrack",
		Short:         "Revenue reporting, acquisition tracking and ad-conversion upload for platform app publishers",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) (err error) {
			a.log, err = a.cfg.Load(cmd.Flags(), logOut)
			return err
		},
	}
	a.cfg.RegisterFlags(root.PersistentFlags())
	root.AddCommand(
		a.serveCommand("ingest", "Run the ingest edge (tracker.js, browser and server events)", components{ingest: true}),
		a.serveCommand("process", "Run the stream processors (Kafka to ClickHouse)", components{process: true}),
		a.serveCommand("query", "Run the reporting REST API and MCP server", components{query: true}),
		a.serveCommand("upload", "Run the ad-conversion uploader", components{upload: true}),
		a.serveCommand("all", "Run every component in one process (local use)", components{ingest: true, process: true, query: true, upload: true}),
		a.migrateCommand(),
		a.adminCommand(),
		a.configDocsCommand(root),
	)
	return root
}

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, args []string, out, logOut io.Writer) int {
	root := New(out, logOut)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(logOut, "revtrack:", err)
		return 1
	}
	return 0
}

func (a *app) configDocsCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "config-docs",
		Short:  "Print the configuration table in Markdown (as in README.md)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(a.out, config.Markdown(root.PersistentFlags()))
			return err
		},
	}
}
