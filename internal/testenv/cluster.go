package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/clickhousex"
)

// ClusterClickHouse is the local cluster's ClickHouse configuration (deploy/local/stack up
// --cluster, with the variables `deploy/local/stack env --cluster` prints) and a database of the
// test's own, named prefix and 8 random hex digits. It skips the test unless
// REVTRACK_CLUSTER_TESTS=1 (make test-cluster sets it), so that make test never needs the cluster.
func ClusterClickHouse(t testing.TB, prefix string) clickhousex.Config {
	t.Helper()
	if os.Getenv("REVTRACK_CLUSTER_TESTS") != "1" {
		t.Skip("cluster tests run with REVTRACK_CLUSTER_TESTS=1 against deploy/local/stack up --cluster")
	}
	cfg := clickhousex.DefaultConfig()
	cfg.Addr, cfg.Cluster = os.Getenv("REVTRACK_CLICKHOUSE_ADDR"), os.Getenv("REVTRACK_CLICKHOUSE_CLUSTER")
	cfg.Username, cfg.Password = os.Getenv("REVTRACK_CLICKHOUSE_USERNAME"), os.Getenv("REVTRACK_CLICKHOUSE_PASSWORD")
	cfg.UsersDir = os.Getenv("REVTRACK_CLICKHOUSE_USERS_DIR")
	cfg.ReadTimeout = 3 * time.Minute // an ON CLUSTER statement waits for every node
	var b [4]byte
	_, _ = rand.Read(b[:])
	cfg.Database = prefix + hex.EncodeToString(b[:])
	if cfg.Cluster == "" {
		t.Fatal("REVTRACK_CLICKHOUSE_CLUSTER is empty: run `eval \"$(deploy/local/stack env --cluster)\"`")
	}
	return cfg
}
