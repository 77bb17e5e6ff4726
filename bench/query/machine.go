package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
)

// machine describes where the numbers were measured.
type machine struct {
	CPUs                     int
	Model                    string
	MemGiB                   float64
	Kernel, Go, LoadAvg      string
	ClickHouse, Kafka, Redis string
}

func describeMachine(ctx context.Context, st *stack, stackDir string) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadAvg: loadAvg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m.Model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					kb, _ := strconv.ParseFloat(f[0], 64)
					m.MemGiB = kb / (1 << 20)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
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

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
