package cli

import (
	_ "embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/internal/httpserver"
)

//go:embed demopage.html
var demoPageHTML string

var demoPage = template.Must(template.New("demo").Parse(demoPageHTML))

type demoPageData struct {
	ScriptURL, PublicKey, BaseURL, Team string
}

// demoPageCommand serves the demo app page that `make run` points at: a page on its own origin
// (the demo source's allowed origin) that loads tracker.js from the service, like a publisher's
// install page would. Every path serves the same page so single-page navigation can be tried.
func (a *app) demoPageCommand() *cobra.Command {
	var addr, publicKey string
	cmd := &cobra.Command{Use: "demo-page", Short: "Serve the local demo page that loads tracker.js", Hidden: true, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			data := demoPageData{ScriptURL: a.cfg.HTTP.BaseURL + "/v1/tracker.js", PublicKey: publicKey, BaseURL: a.cfg.HTTP.BaseURL, Team: demoSlug}
			mux := http.NewServeMux()
			mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				if err := demoPage.Execute(w, data); err != nil {
					a.log.Warn("demo page", "err", err)
				}
			})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			return httpserver.Serve(c.Context(), ln, mux, httpserver.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second},
				a.log.With("component", "demo-page"))
		}}
	cmd.Flags().StringVar(&addr, "addr", demoPageAddr, "listen address of the demo page (its origin must be allowed by the demo source)")
	cmd.Flags().StringVar(&publicKey, "public-key", "", "the demo source's public key")
	return cmd
}
