package devcli

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/httpserver"
)

// Where `make run` serves the fakes (deploy/local/run points revtrack's partner and Google clients
// there).
const (
	partnerAPIAddr = "127.0.0.1:8091"
	googleAPIAddr  = "127.0.0.1:8092"
)

// partnerAPICommand serves partnerfake's demo dataset (3 apps, 2,000 shops, 3 currencies, 18
// months ending today): the local stand-in for the platform's Partner API that `make run` syncs the
// demo workspace from. Its organization and token are the fake's public defaults. The rate limit is
// off: the fake's 4 requests/s would make the demo's first sync take minutes; the sync's handling of
// 429s is covered by its tests.
func (a *app) partnerAPICommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{Use: "partner-api", Short: "Serve the local fake of the platform's Partner API with demo data", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d := partnerfake.Generate(partnerfake.DemoConfig(time.Now()))
			cfg := partnerfake.DefaultServerConfig()
			cfg.RequestsPerSecond = 0
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			return httpserver.Serve(c.Context(), ln, partnerfake.NewServer(d, cfg),
				httpserver.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second}, a.log.With("component", "partner-api"))
		}}
	cmd.Flags().StringVar(&addr, "addr", partnerAPIAddr, "listen address")
	return cmd
}

// googleAPICommand serves googlefake with its default accounts (manager 9876543210 with client
// 1234567890 and two click-import conversion actions): the local stand-in for Google OAuth, the Data
// Manager API and the Google Ads discovery calls that `make run` points the uploader at
// (--ads-google-base-url), so the whole advertising flow — connect, select account, map, validate,
// upload, diagnostics — can be walked through without a Google account (docs/ADS_UPLOAD.md, "Trying
// it locally"). Its OAuth client is the fake's default one. Diagnostics are ready after a minute
// instead of Google's 30, so the demo shows a terminal state the same session.
func (a *app) googleAPICommand() *cobra.Command {
	var addr string
	var delay time.Duration
	cmd := &cobra.Command{Use: "google-api", Short: "Serve the local fake of Google OAuth, Data Manager and Google Ads discovery", Args: cobra.NoArgs,
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
				a.log.With("component", "google-api"))
		}}
	cmd.Flags().StringVar(&addr, "addr", googleAPIAddr, "listen address")
	cmd.Flags().DurationVar(&delay, "processing-delay", time.Minute, "how long diagnostics stay PROCESSING")
	return cmd
}
