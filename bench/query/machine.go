package main

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// machine describes where the numbers were measured.
type machine struct {
	benchkit.Host
	LoadAvg                  string
	ClickHouse, Kafka, Redis string
}

func describeMachine(ctx context.Context, st *stack, stackDir string) machine {
	m := machine{LoadAvg: benchkit.LoadAvg(), Host: benchkit.DescribeHost()}
	m.ClickHouse, m.Redis, m.Kafka = "?", "?", "?"
	if srv, err := clickhousex.OpenServer(ctx, st.ch); err == nil {
		_ = srv.QueryRow(ctx, "SELECT version()").Scan(&m.ClickHouse)
		_ = srv.Close()
	}
	if rdb, err := redisx.Open(ctx, st.redis); err == nil {
		if info, err := rdb.Info(ctx, "server").Result(); err == nil {
			for l := range strings.Lines(info) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
					m.Redis = v
				}
			}
		}
		_ = rdb.Close()
	}
	// The broker's version is in its jar's name (deploy/local/kafka/pom.xml pins it).
	if jars, _ := filepath.Glob(filepath.Join(stackDir, "kafka", "libs", "kafka_2.13-*.jar")); len(jars) > 0 {
		m.Kafka = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "kafka_2.13-"), ".jar")
	}
	return m
}
