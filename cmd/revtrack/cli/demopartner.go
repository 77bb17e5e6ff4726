package cli

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/httpserver"
)

// The demo partner API: the local stand-in for the platform's Partner API that `make run` syncs the
// demo workspace from. Its organization and token are the fake's public defaults.
const (
	demoPartnerAddr = "127.0.0.1:8091"
)

// demoPartnerCommand serves partnerfake's demo dataset (3 apps, 2,000 shops, 3 currencies, 18
// months ending today). The rate limit is off: the fake's 4 requests/s would make the demo's first
// sync take minutes; the sync's handling of 429s is covered by its tests.
func (a *app) demoPartnerCommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{Use: "demo-partner-api", Short: "Serve the local fake of the platform's Partner API with demo data", Hidden: true, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d := partnerfake.Generate(partnerfake.DemoConfig(time.Now()))
			cfg := partnerfake.DefaultServerConfig()
			cfg.RequestsPerSecond = 0
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			return httpserver.Serve(c.Context(), ln, partnerfake.NewServer(d, cfg),
				httpserver.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second}, a.log.With("component", "demo-partner-api"))
		}}
	cmd.Flags().StringVar(&addr, "addr", demoPartnerAddr, "listen address")
	return cmd
}
