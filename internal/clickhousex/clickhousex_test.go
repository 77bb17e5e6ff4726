package clickhousex

import (
	"strings"
	"testing"
)

// TestClusterSetting: the cluster name is an identifier (it is written into DDL), and only a
// cluster's connections carry session settings, so a single node's stay exactly as before.
func TestClusterSetting(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil || c.sessionSettings() != nil {
		t.Fatalf("single node: validate %v, settings %v", err, c.sessionSettings())
	}
	c.Cluster = "revtrack"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := c.sessionSettings(); s["insert_distributed_sync"] != 1 || len(s) != 1 {
		t.Fatalf("cluster settings %v", s)
	}
	c.Cluster = "revtrack ON CLUSTER x; DROP"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "clickhouse-cluster") {
		t.Fatalf("a cluster name that is no identifier: %v", err)
	}
}
