package cli

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/httpserver"
)

// The demo Google endpoints: the local stand-in for Google OAuth, the Data Manager API and the
// Google Ads discovery calls that `make run` points the uploader at (--ads-google-base-url), so the
// whole advertising flow — connect, select account, map, validate, upload, diagnostics — can be
// walked through without a Google account. Its OAuth client is the fake's default one.
const (
	demoGoogleAddr = "127.0.0.1:8092"
	demoGoogleURL  = "http://" + demoGoogleAddr
)

// demoGoogleCommand serves googlefake with its default accounts (manager 9876543210 with client
// 1234567890 and two click-import conversion actions). Diagnostics are ready after a minute instead
// of Google's 30, so the demo shows a terminal state the same session.
func (a *app) demoGoogleCommand() *cobra.Command {
	var addr string
	var delay time.Duration
	cmd := &cobra.Command{Use: "demo-google-api", Short: "Serve the local fake of Google OAuth, Data Manager and Google Ads discovery", Hidden: true, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg := googlefake.DefaultConfig()
			cfg.ProcessingDelay = delay
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			return httpserver.Serve(c.Context(), ln, googlefake.New(cfg),
				// A Validation only request carries up to 2,000 events: the fake's own 64 MiB cap, not the API's 1 MiB.
				httpserver.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second, MaxBodyBytes: 64 << 20},
				a.log.With("component", "demo-google-api"))
		}}
	cmd.Flags().StringVar(&addr, "addr", demoGoogleAddr, "listen address")
	cmd.Flags().DurationVar(&delay, "processing-delay", time.Minute, "how long diagnostics stay PROCESSING")
	return cmd
}
