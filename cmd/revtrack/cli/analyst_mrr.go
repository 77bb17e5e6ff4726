package cli

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/processors/analystmrr"
	"github.com/revtrack/revtrack/query/reporting"
)

// analystMRR is the job behind the analyst views of daily MRR and movements (docs/ANALYSTS.md),
// run by the process component. Its reporting store keeps no responses: each recomputation is
// needed because the data changed, so a kept one would never serve.
func (a *app) analystMRR(in *infra, store *controlplane.Store, reg prometheus.Registerer) *analystmrr.Job {
	log := a.log.With("component", "analyst-mrr")
	return &analystmrr.Job{Conn: in.clickhouse, Reports: reporting.New(in.clickhouse, reporting.WithResultCache(0), reporting.WithLogger(log)),
		Workspaces: store, Locker: redisx.Locker{Client: in.redis, Prefix: a.cfg.Redis.KeyPrefix},
		Lease: "analyst-mrr:" + a.cfg.ClickHouse.Database, Log: log, Metrics: analystmrr.NewMetrics(reg)}
}
