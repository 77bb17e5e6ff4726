package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/adminapi"
	webconsole "github.com/revtrack/revtrack/console"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/health"
	"github.com/revtrack/revtrack/internal/httpserver"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/obs"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/budget"
	querymcp "github.com/revtrack/revtrack/query/mcp"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/query/tracking"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
)

// components selects what one process runs.
type components struct{ ingest, process, query, upload bool }

func (c components) names() []string {
	var out []string
	for _, p := range []struct {
		name string
		on   bool
	}{{"ingest", c.ingest}, {"process", c.process}, {"query", c.query}, {"upload", c.upload}} {
		if p.on {
			out = append(out, p.name)
		}
	}
	return out
}

func (a *app) serveCommand(use, short string, c components) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), use, c) },
	}
}

// serve runs the selected components until ctx ends: HTTP drains first (an accepted event must
// reach Kafka), then the consumers commit and leave their groups, then the producer is flushed and
// the stores closed.
func (a *app) serve(ctx context.Context, name string, c components) error {
	log := a.log.With("component", name)
	if err := a.cfg.CheckServerKeys(); err != nil {
		return err
	}
	if a.cfg.AllowDevelopmentKey {
		log.Warn("secrets may be sealed with the published development key (--allow-development-encryption-key): local use only")
	}
	if a.cfg.Egress.AllowPrivateNetworks {
		log.Warn("platform clients may connect to private and loopback addresses (--egress-allow-private-networks): local use only")
	}
	reg := obs.NewRegistry()
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	in, err := a.openInfra(startCtx, true, reg)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), a.cfg.HTTP.ShutdownTimeout)
		defer cancel()
		if err := in.close(cctx); err != nil {
			log.Error("shutdown", "err", err)
		}
		log.Info("stopped")
	}()

	// Listening before any consumer is built: a second process configured with a port in use
	// stops here, before its consumers could join a group under the same derived instance ID and
	// fence the running ones.
	ln, err := net.Listen("tcp", a.cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", a.cfg.HTTP.Addr, err)
	}
	defer ln.Close()
	if a.cfg.Kafka.InstanceID == "" {
		a.cfg.Kafka.InstanceID = kafkax.DefaultInstanceID(name, ln.Addr().(*net.TCPAddr).Port)
	}

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	httpserver.Unrouted(engine)
	services, err := health.Needs(c.names()...)
	if err != nil {
		return err
	}
	in.readiness(services).Register(engine)
	engine.GET("/metrics", gin.WrapH(obs.MetricsHandler(reg)))

	store := controlplane.NewStore(in.clickhouse, in.redis, a.cfg.Redis.KeyPrefix)
	// The platform sync: scheduled in the process component, started on demand by the admin API.
	var syncs *platformsync.Service
	if c.process || c.query {
		if syncs, err = a.syncService(in, store, platformsync.NewMetrics(reg), a.log.With("component", "platform-sync")); err != nil {
			return err
		}
	}
	if c.ingest {
		dedup := &ingest.RedisDeduper{Client: in.redis, Prefix: a.cfg.Redis.KeyPrefix, TTL: a.cfg.Ingest.DedupTTL,
			PendingTTL: a.cfg.Kafka.DeliveryTimeout + 5*time.Second}
		limiter := &ingest.RedisLimiter{Client: in.redis, Prefix: a.cfg.Redis.KeyPrefix}
		ingest.New(a.cfg.Ingest, ingest.Deps{
			ControlPlane: store,
			Producer:     in.producer,
			Deduper:      dedup,
			Limiter:      limiter,
			Admitter:     &ingest.RedisAdmitter{Limiter: limiter, Deduper: dedup},
			BrowserTopic: a.cfg.Kafka.Topic(schemas.TopicBrowserEvents),
			ServerTopic:  a.cfg.Kafka.Topic(schemas.TopicServerEvents),
			Registry:     reg,
			Log:          a.log.With("component", "ingest"),
		}).Register(engine)
	}

	// The ad-conversion uploader: queue consumer, dispatcher and diagnostics poller. Built before
	// the admin API so that, in one process, a user Retry is counted in its metrics.
	var upload *uploader.Service
	if c.upload {
		if upload, err = a.uploadService(in, store, reg, a.log.With("component", "upload")); err != nil {
			return err
		}
		// Run closes it too; this covers a start-up that fails before Run.
		defer upload.Close()
	}

	if c.query {
		// The control-plane API rides with the query edge: both are the workspace-facing,
		// key-authenticated surface. The reporting API never writes and never triggers a sync; the
		// admin API may start on-demand sync runs (POST /api/admin/sync-runs).
		adminLog := a.log.With("component", "admin-api")
		// Sync runs with the live progress of running ones, which the syncing process (maybe not
		// this one) publishes in Redis.
		runs := syncruns.Store{CH: in.clickhouse, Live: in.redis, Prefix: a.cfg.Redis.KeyPrefix, Log: adminLog}
		syncAPI, err := a.syncAPI(store, syncs, runs, adminLog)
		if err != nil {
			return err
		}
		rows := uploader.NewRows(in.clickhouse, uploader.WithDueHints(in.redis, a.cfg.Redis.KeyPrefix))
		if upload != nil {
			rows = upload.Rows()
		}
		adsAPI, err := a.adsAPI(in, store, rows, adminLog)
		if err != nil {
			return err
		}
		signIn, err := a.console(in, store)
		if err != nil {
			return err
		}
		(&adminapi.API{Store: store, Log: adminLog, Sync: syncAPI, Ads: adsAPI, Analysts: a.analystManager(in, store),
			People: store, Console: signIn}).Register(engine)
		queryLog := a.log.With("component", "query")
		limits := budget.New(a.cfg.QueryLimits, &budget.RedisBuckets{Client: in.redis, Prefix: a.cfg.Redis.KeyPrefix}, reg)
		// REST and MCP read through one reporting store: one set of kept answers, one budget.
		reports := reporting.New(in.clickhouse, reporting.WithLogger(queryLog))
		(&query.API{Keys: store, Console: signIn.Auth, Sources: store, Tracking: tracking.New(in.clickhouse),
			Reporting: reports, Budget: limits, Log: queryLog}).Register(engine)
		querymcp.New(querymcp.Deps{Reporting: reports, Keys: store, SyncRuns: runs, Budget: limits, Registry: reg,
			Log: a.log.With("component", "mcp")}).Register(engine)
		webconsole.Register(engine) // the web console at / (docs/CONSOLE.md); API paths keep their 404s
	}

	g, gctx := errgroup.WithContext(ctx)
	if syncs != nil {
		// Ends with gctx: runs in flight are cancelled and recorded as failed, resumable.
		g.Go(func() error { return syncs.Run(gctx, c.process) })
	}
	if c.process {
		svc, err := processors.New(a.cfg.Process, processors.Deps{Kafka: a.cfg.Kafka, ClickHouse: in.clickhouse,
			Producer: in.producer, Registry: reg,
			Log: a.log.With("component", "process"), RetentionCluster: a.retentionCluster()})
		if err != nil {
			return err
		}
		g.Go(func() error { return svc.Run(gctx) })
		// Per-workspace analyst copies (docs/ANALYSTS.md); idle where analyst access is not configured.
		g.Go(func() error { return a.analystManager(in, store).Schedule(gctx, a.cfg.ClickHouse.AnalystRefresh) })
		// The analyst views of daily MRR and movements, recomputed by the reporting engine from what landed.
		g.Go(func() error { return a.analystMRR(in, store, reg).Run(gctx, a.cfg.AnalystMRR.Interval) })
	}
	if upload != nil {
		g.Go(func() error { return upload.Run(gctx) })
	}

	// MCP tool calls run several reads in turn, so their answers get a longer write deadline.
	var longWrites []string
	if c.query {
		longWrites = append(longWrites, querymcp.Path)
	}
	g.Go(func() error { return httpserver.Serve(gctx, ln, engine, a.cfg.HTTP.Server(longWrites), log) })
	log.Info("started", "components", c.names(), "base_url", a.cfg.HTTP.BaseURL, "kafka_instance_id", a.cfg.Kafka.InstanceID)
	return g.Wait()
}

// retentionCluster places retention on the ClickHouse cluster's local tables, dropping partitions
// through a connection to each node (processors.RetentionCluster); the zero value on one node.
func (a *app) retentionCluster() processors.RetentionCluster {
	ch := a.cfg.ClickHouse
	if ch.Cluster == "" {
		return processors.RetentionCluster{}
	}
	return processors.RetentionCluster{Name: ch.Cluster, Database: ch.Database,
		Node: func(ctx context.Context, addr string) (processors.RetentionNode, error) {
			c := ch
			c.Addr, c.Cluster = addr, "" // a node's own tables: none of the cluster's session checks
			return clickhousex.Open(ctx, c)
		}}
}
