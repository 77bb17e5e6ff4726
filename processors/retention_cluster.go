package processors

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// RetentionCluster places retention on a ClickHouse cluster (deploy/README.md, "ClickHouse"): the
// retained tables are Distributed tables over replicated <name>_local tables on every shard, and
// a Distributed table can neither drop a partition nor run a mutation. Empty Name: a single node.
type RetentionCluster struct {
	Name     string
	Database string
	// Node connects to one node (host:port as the cluster's definition names it). With it, each
	// partition is dropped on the leader replica of each shard: ClickHouse 18.16 forwards a DROP
	// PARTITION received by another replica to the leader as the user `default` without a
	// password, which fails wherever `default` has one. Without it, the drop runs ON CLUSTER.
	Node func(ctx context.Context, addr string) (RetentionNode, error)
}

// RetentionNode is a connection to one node.
type RetentionNode interface {
	RetentionConn
	Close() error
}

// RunClusterRetention applies retention as RunRetention does, to the local tables of every shard:
// the partitions to drop are those any shard holds (a month one shard lacks is dropped as a
// no-op), each dropped by one replica of each shard (the leader, with cl.Node; else whichever
// takes the query ON CLUSTER) and by replication on the others, and the upload queue's
// identifiers are scrubbed by a mutation ON CLUSTER. The count of rows to scrub reads the
// Distributed table, as on a single node.
func RunClusterRetention(ctx context.Context, conn RetentionConn, now time.Time, cl RetentionCluster) (RetentionReport, error) {
	if cl.Name == "" {
		return RunRetention(ctx, conn, now)
	}
	rep := RetentionReport{Cutoff: now.UTC().Add(-RetentionPeriod)}
	parts, err := clusterExpiredPartitions(ctx, conn, cl, rep.Cutoff)
	if err != nil {
		return rep, err
	}
	var errs []error
	if cl.Node != nil && len(parts) > 0 {
		rep.Dropped, errs = dropOnLeaders(ctx, conn, cl, parts)
	} else {
		for _, p := range parts {
			// Both values are validated, never input: see retention_sql.go.
			q := "ALTER TABLE " + cl.Database + "." + schemas.LocalTable(p.table) + " ON CLUSTER " + cl.Name + " DROP PARTITION " + p.id
			if err := conn.Exec(ctx, q); err != nil {
				errs = append(errs, fmt.Errorf("drop %s partition %s: %w", p.table, p.id, err))
				continue
			}
			rep.Dropped = append(rep.Dropped, p.table+"/"+p.id)
		}
	}
	cutoff := rep.Cutoff.Unix()
	var n uint64
	if err := conn.QueryRow(ctx, countUploadIdentifiers, cutoff).Scan(&n); err != nil {
		return rep, errors.Join(append(errs, fmt.Errorf("count upload identifiers: %w", err))...)
	}
	if n > 0 {
		scrub := strings.Replace(scrubUploadIdentifiers, "ALTER TABLE upload_queue ",
			"ALTER TABLE "+cl.Database+"."+schemas.LocalTable("upload_queue")+" ON CLUSTER "+cl.Name+" ", 1)
		if err := conn.Exec(ctx, scrub, cutoff); err != nil {
			return rep, errors.Join(append(errs, fmt.Errorf("scrub upload identifiers: %w", err))...)
		}
		rep.Scrubbed = n
	}
	return rep, errors.Join(errs...)
}

// selectClusterRetainedPartitions lists the monthly partitions of the local tables on one replica
// of every shard (the cluster table function), under the retained tables' names.
const selectClusterRetainedPartitions = `SELECT substring(table, 1, length(table) - 6) AS retained, partition_id
FROM cluster(?, system, parts)
WHERE database = ? AND active AND has(?, table)
GROUP BY retained, partition_id
ORDER BY retained, partition_id`

func clusterExpiredPartitions(ctx context.Context, conn RetentionConn, cl RetentionCluster, cutoff time.Time) ([]partition, error) {
	var locals []string
	for _, t := range retainedTables {
		locals = append(locals, schemas.LocalTable(t))
	}
	rows, err := conn.Query(ctx, selectClusterRetainedPartitions, cl.Name, cl.Database, locals)
	if err != nil {
		return nil, fmt.Errorf("list partitions on cluster %s: %w", cl.Name, err)
	}
	defer rows.Close()
	var all []partition
	for rows.Next() {
		var p partition
		if err := rows.Scan(&p.table, &p.id); err != nil {
			return nil, err
		}
		all = append(all, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return keepExpired(all, cutoff), nil
}

// keepExpired keeps the monthly partitions of retained tables whose month ended at or before the
// cutoff, as expiredPartitions does on a single node.
func keepExpired(parts []partition, cutoff time.Time) []partition {
	allowed := map[string]bool{}
	for _, t := range retainedTables {
		allowed[t] = true
	}
	var out []partition
	for _, p := range parts {
		if !allowed[p.table] || !monthPartitionRe.MatchString(p.id) {
			continue // not a monthly partition of ours: never touch it
		}
		ym, _ := strconv.Atoi(p.id)
		if end := time.Date(ym/100, time.Month(ym%100)+1, 1, 0, 0, 0, 0, time.UTC); !end.After(cutoff) {
			out = append(out, p)
		}
	}
	return out
}

const selectLeaderTables = `SELECT table FROM system.replicas WHERE database = ? AND is_leader AND has(?, table)`

// dropOnLeaders drops each partition on every node that leads its table's replicas (one per
// shard); replication drops it on the other replicas. A partition counts as dropped when every
// leader that was asked dropped it.
func dropOnLeaders(ctx context.Context, conn RetentionConn, cl RetentionCluster, parts []partition) ([]string, []error) {
	addrs, err := schemas.ClusterNodes(ctx, conn, cl.Name)
	if err != nil {
		return nil, []error{err}
	}
	var locals []string
	for _, t := range retainedTables {
		locals = append(locals, schemas.LocalTable(t))
	}
	failed := map[partition]bool{}
	var errs []error
	for _, addr := range addrs {
		node, err := cl.Node(ctx, addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", addr, err))
			continue
		}
		leads := map[string]bool{}
		rows, err := node.Query(ctx, selectLeaderTables, cl.Database, locals)
		if err == nil {
			for rows.Next() {
				var t string
				if err = rows.Scan(&t); err != nil {
					break
				}
				leads[t] = true
			}
			rows.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: leaders: %w", addr, err))
		}
		for _, p := range parts {
			local := schemas.LocalTable(p.table)
			if !leads[local] {
				continue
			}
			// Both values are validated, never input: see retention_sql.go.
			if err := node.Exec(ctx, "ALTER TABLE "+cl.Database+"."+local+" DROP PARTITION "+p.id); err != nil {
				errs = append(errs, fmt.Errorf("node %s: drop %s partition %s: %w", addr, p.table, p.id, err))
				failed[p] = true
			}
		}
		_ = node.Close()
	}
	var dropped []string
	for _, p := range parts {
		if !failed[p] {
			dropped = append(dropped, p.table+"/"+p.id)
		}
	}
	return dropped, errs
}
