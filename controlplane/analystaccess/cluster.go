package analystaccess

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/schemas"
)

// Cluster mode (ClickHouse.Cluster set, deploy/README.md "Analyst access"): the workspace database
// and every object in it are created, renamed and dropped ON CLUSTER, and each copy is kept whole
// on every node: one replication group over the whole cluster, as schemas/cluster.go does for the
// small tables, with a ZooKeeper path of its own per workspace database and table. The copy is
// filled once, on the node revtrack is connected to, from the source's Distributed table (or its
// table kept whole), and replication gives it to every other node, so an analyst may connect to
// any node. A single node takes none of these paths: its statements are those it always ran.

// clusterSourceEngine is what a copy reproduces on a cluster: a replicated table (kept whole on
// every node) or a Distributed one over replicated <name>_local tables.
var clusterSourceEngine = regexp.MustCompile(`^Replicated(Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing)?MergeTree$`)

// replicatedArgsRe is the ZooKeeper path and replica name that open a replicated engine's arguments.
var replicatedArgsRe = regexp.MustCompile(`^(Replicated\w*MergeTree)\('[^']*', '[^']*'`)

// createViewNameRe is the head of a stored CREATE VIEW, where ON CLUSTER goes.
var createViewNameRe = regexp.MustCompile(`^CREATE VIEW (\S+) `)

// on is the ON CLUSTER clause of a DDL statement: empty on a single node.
func (m *Manager) on() string {
	if m.ClickHouse.Cluster == "" {
		return ""
	}
	return " ON CLUSTER " + m.ClickHouse.Cluster
}

// clusterCopySource is the table whose engine a copy of table repeats on a cluster: itself when
// it is kept whole, its <name>_local table when it is Distributed.
func clusterCopySource(engines map[string]string, table string) (string, error) {
	switch e := engines[table]; {
	case clusterSourceEngine.MatchString(e):
		return table, nil
	case e == "Distributed":
		local := schemas.LocalTable(table)
		if !clusterSourceEngine.MatchString(engines[local]) {
			return "", fmt.Errorf("table %s is Distributed over %s (engine %q), which a workspace copy cannot reproduce", table, local, engines[local])
		}
		return local, nil
	default:
		return "", fmt.Errorf("table %s (engine %s) is neither replicated nor Distributed: is the database migrated with --clickhouse-cluster?", table, e)
	}
}

// clusterCopyEngine is the engine of a workspace copy on a cluster: the source's replicated engine
// with its parameters, partitioning and order, on a ZooKeeper path of the copy's own, whose replica
// names need the shard to be unique across the one group all nodes form.
func clusterCopyEngine(engineFull, db, name string) (string, error) {
	if !replicatedArgsRe.MatchString(engineFull) {
		return "", fmt.Errorf("engine %.80q: not a replicated engine with a path and a replica name", engineFull)
	}
	return replicatedArgsRe.ReplaceAllString(engineFull, "${1}('/clickhouse/tables/all/"+db+"/"+name+"', '{shard}-{replica}'"), nil
}

// createClusterCopy creates db.name on every node as an empty copy of the source table's columns.
func (m *Manager) createClusterCopy(ctx context.Context, s source, db, name, table string) error {
	from := s.copyFrom[table]
	engine, err := clusterCopyEngine(s.engineFull[from], db, name)
	if err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	return m.Conn.Exec(ctx, "CREATE TABLE "+db+"."+name+m.on()+" AS "+m.ClickHouse.Database+"."+from+" ENGINE = "+engine)
}

// clusterNodes is how many nodes the cluster has: a copy's insert returns once every one of them
// holds it (insert_quorum), so the copy swapped in is whole on whichever node an analyst reads. A
// node that is down fails the refresh, as it fails any ON CLUSTER statement, and the previous copy
// stays.
func (m *Manager) clusterNodes(ctx context.Context) (uint64, error) {
	var n uint64
	if err := m.Conn.QueryRow(ctx, "SELECT count() FROM system.clusters WHERE cluster = ?", m.ClickHouse.Cluster).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the cluster's nodes: %w", err)
	}
	if n == 0 {
		return 0, fmt.Errorf("cluster %s is not in system.clusters", m.ClickHouse.Cluster)
	}
	return n, nil
}

// insertContext carries the copy's insert settings: none on a single node.
func (m *Manager) insertContext(ctx context.Context) (context.Context, error) {
	if m.ClickHouse.Cluster == "" {
		return ctx, nil
	}
	n, err := m.clusterNodes(ctx)
	if err != nil {
		return nil, err
	}
	return clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_quorum": int(n)})), nil
}

// onClusterView puts ON CLUSTER into a stored CREATE VIEW statement.
func (m *Manager) onClusterView(create string) (string, error) {
	if m.ClickHouse.Cluster == "" {
		return create, nil
	}
	if !createViewNameRe.MatchString(create) {
		return "", fmt.Errorf("view statement %.60q: no CREATE VIEW head", create)
	}
	return createViewNameRe.ReplaceAllString(create, "CREATE VIEW ${1}"+m.on()+" "), nil
}

// dropDatabase removes a workspace database. On a cluster each table goes first, ON CLUSTER: a
// replicated table's last replica to go removes its path in ZooKeeper, so a copy created again
// starts clean (the empty node of the database's path stays; ClickHouse removes no parent).
func (m *Manager) dropDatabase(ctx context.Context, db string) error {
	if m.ClickHouse.Cluster != "" {
		objs, err := m.objects(ctx, db)
		if err != nil {
			return err
		}
		for name := range objs {
			if strings.ContainsAny(name, "`'\"") {
				return fmt.Errorf("table name %q in %s", name, db)
			}
			if err := m.Conn.Exec(ctx, "DROP TABLE IF EXISTS "+db+"."+name+m.on()); err != nil {
				return fmt.Errorf("drop analyst table %s.%s: %w", db, name, err)
			}
		}
	}
	return m.Conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+m.on())
}
