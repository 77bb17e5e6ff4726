// Package mcp is the remote MCP server at /api/mcp (Streamable HTTP, bearer key): the reporting data
// of the REST API for MCP clients. It holds no metric of its own. REST and MCP are two doors into one
// query service (docs/MCP.md): every reporting and customer tool parses its arguments with the REST
// routes' parser and calls the same reporting interface (query.Reporting) under the same cost limits
// (service.go), and words its failures from the REST error table, so each number, limit,
// data-access rule and error a tool returns is the REST API's; composed tools (query_metrics,
// compare_periods) only arrange several such answers. list_sync_runs reads the sync runs through
// the same read-side store as the admin API (query/syncruns), whose route needs an admin key.
package mcp

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/budget"
)

// Path is where the server is mounted, relative to the base URL (docs/MCP.md).
const Path = "/api/mcp"

// ServerName and ServerVersion identify the server in the initialize (or server/discover) reply.
const (
	ServerName    = "revtrack"
	ServerVersion = "1.0.0"
)

// instructions is what a client may show the model about the server as a whole.
const instructions = `Read-only subscription analytics of one workspace (apps published on an e-commerce platform), from data synced from the platform. ` +
	`Money fields end in "Cents" and are integers in minor units of their currency (4900 with USD = 49.00 USD; JPY has no minor unit). ` +
	`Every figure is reported per currency: never add or compare amounts of different currencies. ` +
	`Dates are UTC calendar dates YYYY-MM-DD; ranges include both ends; without from/to the range is the last 30 days ending today. ` +
	`Before treating missing history as zero, check "coverage" and "staleDataWarning" (list_sync_runs shows the sync runs behind them).`

// Deps is what the server needs.
type Deps struct {
	// Reporting is the reporting read side the REST routes read too (query/reporting.Store).
	Reporting query.Reporting
	// Keys authenticates the bearer key before any MCP message is read.
	Keys authn.Keys
	// SyncRuns reads the sync runs of list_sync_runs.
	SyncRuns SyncRunReader
	// Budget is the REST API's cost budget (query.API.Budget): each tool call costs its own charge,
	// and each read it makes what the same REST request costs; nil charges nothing.
	Budget *budget.Budget
	// Now is the clock of the default ranges, the REST API's (query.API.Now); nil is time.Now.
	Now func() time.Time
	// Registry receives the tool-call metrics; nil registers them nowhere.
	Registry prometheus.Registerer
	Log      *slog.Logger
}

// Server is the MCP endpoint.
type Server struct {
	http *mcpserver.StreamableHTTPServer
	keys authn.Keys
}

// New builds the server and registers every tool.
func New(d Deps) *Server {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	m := mcpserver.NewMCPServer(ServerName, ServerVersion,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithInstructions(instructions),
		mcpserver.WithRecovery(),
	)
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	t := &tools{svc: &service{reporting: d.Reporting, budget: d.Budget, now: d.Now}, runs: d.SyncRuns, log: d.Log,
		metrics: newMetrics(d.Registry)}
	for _, def := range t.all() {
		m.AddTool(def.tool, def.handler)
	}
	h := mcpserver.NewStreamableHTTPServer(m,
		// No server-initiated messages exist here, so GET (a listening stream) answers 405. It also
		// keeps shutdown simple: no stream outlives its request.
		mcpserver.WithDisableStreaming(true),
		// The guard against DNS rebinding refuses loopback requests whose Host is not localhost,
		// which would refuse every request behind a reverse proxy on the same host. It protects
		// unauthenticated local servers; here every request carries a bearer key that a rebinding
		// page cannot know.
		mcpserver.WithDisableLocalhostProtection(true),
		mcpserver.WithStreamableHTTPLogger(d.Log),
	)
	return &Server{http: h, keys: d.Keys}
}

// Register mounts the endpoint. The bearer key is checked by the same middleware as the REST API
// before the MCP message is read, so a missing, invalid or revoked key is refused with 401 (an
// inactive subscription with 403) and no tool runs. Each request is checked again: a key revoked
// mid-session stops working at its next request. This is the one authentication of a tool call:
// the tools read as the caller it resolved.
func (s *Server) Register(r gin.IRouter) {
	r.Any(Path, noStore, authn.Middleware(s.keys, writeError), s.serve)
}

func (s *Server) serve(c *gin.Context) {
	ctx := withCaller(c.Request.Context(), callerInfo{caller: authn.From(c), noCache: query.NoCacheRequested(c.Request.Header)})
	s.http.ServeHTTP(c.Writer, c.Request.WithContext(ctx))
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }
