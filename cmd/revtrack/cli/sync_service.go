package cli

import (
	"log/slog"

	"github.com/revtrack/revtrack/adminapi"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/query/syncruns"
	"github.com/revtrack/revtrack/schemas"
)

// syncService builds the platform sync service on a process's clients (Kafka included). The
// process component runs its schedule; the admin API (query component) starts on-demand runs; the
// CLI runs one app at a time. All of them take the same per-app Redis lock.
func (a *app) syncService(in *infra, store *controlplane.Store, m *platformsync.Metrics, log *slog.Logger) (*platformsync.Service, error) {
	keys, err := a.keyring()
	if err != nil {
		return nil, err
	}
	return platformsync.NewService(a.cfg.PlatformSync, platformsync.ServiceDeps{
		Workspaces:  store,
		Connections: store.Partners(keys),
		CH:          in.clickhouse,
		Producer:    in.producer,
		Topic:       a.cfg.Kafka.Topic(schemas.TopicPlatformRecords),
		Redis:       in.redis,
		RedisPrefix: a.cfg.Redis.KeyPrefix,
		Metrics:     m,
		Log:         log,
	}), nil
}

// syncAPI is the admin API's partner-connection and sync-run routes: runs start on svc (the writer)
// and are listed from sync_runs through their read-side store.
func (a *app) syncAPI(store *controlplane.Store, svc *platformsync.Service, runs syncruns.Store, log *slog.Logger) (*adminapi.SyncAPI, error) {
	keys, err := a.keyring()
	if err != nil {
		return nil, err
	}
	return &adminapi.SyncAPI{Partners: store.Partners(keys), Syncs: svc, Runs: runs, Audit: store, Log: log}, nil
}
