package devcli

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/revtrack/revtrack/internal/httpserver"
)

//go:embed demopage.html
var demoPageHTML string

var demoPage = template.Must(template.New("demo").Parse(demoPageHTML))

// The placeholders of the server-event example that the page's script fills in for each example:
// the visitor's acquisition ID, a new event ID and the time.
const (
	phAcquisitionID = "{acquisitionId}"
	phEventID       = "{eventId}"
	phOccurredAt    = "{occurredAt}"
)

type demoPageData struct {
	ScriptURL, PublicKey string
	// ServerEvent is the shell command that reports an install, with the placeholders above.
	ServerEvent string
}

// serverEventCommand is the curl command the page shows. The private key comes from the shell
// variable TRACKER_SK, so the header is in double quotes (the shell expands it there, not inside
// single quotes); the body has no shell variable and stays in single quotes. The body is built
// with encoding/json, so it is valid JSON for any team slug or key.
func serverEventCommand(baseURL, team, publicKey string) string {
	body, _ := json.Marshal(struct {
		TeamSlug      string `json:"teamSlug"`
		PublicKey     string `json:"publicKey"`
		EventID       string `json:"eventId"`
		AcquisitionID string `json:"acquisitionId"`
		Name          string `json:"name"`
		CustomerRef   string `json:"customerRef"`
		OccurredAt    string `json:"occurredAt"`
	}{team, publicKey, phEventID, phAcquisitionID, "install", "demo-shop.myshopify.com", phOccurredAt})
	return "curl -s -X POST " + baseURL + "/api/tracking/server-events \\\n" +
		"  -H \"Authorization: Bearer $TRACKER_SK\" -H 'Content-Type: application/json' \\\n" +
		"  -d '" + string(body) + "'"
}

// demoPageHandler serves the demo app page: a page on its own origin (the demo source's allowed
// origin) that loads tracker.js from the service, like a publisher's install page would. Every path
// serves the same page so single-page navigation can be tried.
func demoPageHandler(baseURL, team, publicKey string, log *slog.Logger) http.Handler {
	data := demoPageData{ScriptURL: baseURL + "/v1/tracker.js", PublicKey: publicKey, ServerEvent: serverEventCommand(baseURL, team, publicKey)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := demoPage.Execute(w, data); err != nil {
			log.Warn("demo page", "err", err)
		}
	})
}

// demoPageCommand serves the demo page that `make run` points at.
func (a *app) demoPageCommand() *cobra.Command {
	var addr, publicKey string
	cmd := &cobra.Command{Use: "demo-page", Short: "Serve the local demo page that loads tracker.js", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			log := a.log.With("component", "demo-page")
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", addr, err)
			}
			return httpserver.Serve(c.Context(), ln, demoPageHandler(a.cfg.HTTP.BaseURL, demoSlug, publicKey, log),
				httpserver.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second}, log)
		}}
	cmd.Flags().StringVar(&addr, "addr", demoPageAddr, "listen address of the demo page (its origin must be allowed by the demo source)")
	cmd.Flags().StringVar(&publicKey, "public-key", "", "the demo source's public key")
	return cmd
}
