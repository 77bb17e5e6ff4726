package schemas

import (
	"fmt"
	"regexp"
	"strings"
)

// Cluster mode (deploy/README.md, "ClickHouse"): the migrations are written for one node, and
// ClusterDDL rewrites each statement for a remote_servers cluster rather than keeping a second copy
// of every migration. It knows the forms the migrations use and refuses any other, so a migration
// written in a new form fails the goldens (schemas/testdata/cluster) instead of running unsharded.
//
// Every name is qualified with the database: a query ON CLUSTER runs on each node in the database
// of the node's own session, not in the caller's.

// Cluster names the cluster and the database the tables live in.
type Cluster struct {
	Name     string
	Database string
}

var (
	createTableRe  = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) \((.*)\) ENGINE = (\w+)(.*)$`)
	createMVRe     = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s+(SELECT\b.*)$`)
	createViewRe   = regexp.MustCompile(`(?s)^CREATE VIEW IF NOT EXISTS (\w+) AS\s+(SELECT\b.*)$`)
	alterRe        = regexp.MustCompile(`(?s)^ALTER TABLE (\w+) (ADD COLUMN|UPDATE|DELETE) (.*)$`)
	insertSelectRe = regexp.MustCompile(`(?s)^INSERT INTO (\w+) \(.*\)\s+SELECT `)
	fromJoinRe     = regexp.MustCompile(`\b(FROM|JOIN)(\s+)(\w+)\b`)
	inSubqueryRe   = regexp.MustCompile(`\bIN \((\s*)SELECT\b`)
	mvSourceRe     = regexp.MustCompile(`\bFROM (\w+)\b`)
)

// replicatedEngines maps each engine the migrations use to its replicated form.
var replicatedEngines = map[string]string{
	"MergeTree":            "ReplicatedMergeTree",
	"ReplacingMergeTree":   "ReplicatedReplacingMergeTree",
	"AggregatingMergeTree": "ReplicatedAggregatingMergeTree",
}

// EveryNode starts a statement the migrator runs on each node of the cluster in turn, not ON
// CLUSTER; EveryShard one it runs on one replica of each shard, whose replication carries it to
// the shard's other replicas. Each is a comment, so the statement stays valid SQL.
const (
	EveryNode  = "/* on every node */ "
	EveryShard = "/* on one replica of every shard */ "
)

// LocalTable is the name of a sharded table's replicated table on each shard.
func LocalTable(table string) string { return table + "_local" }

// ClusterDDL returns the statements that apply one migration statement on the cluster, in order.
func (c Cluster) ClusterDDL(statement string) ([]string, error) {
	switch {
	case createTableRe.MatchString(statement):
		return c.createTable(statement)
	case createMVRe.MatchString(statement):
		return c.createMaterializedView(statement)
	case createViewRe.MatchString(statement):
		return c.createView(statement)
	case alterRe.MatchString(statement):
		return c.alter(statement)
	case insertSelectRe.MatchString(statement):
		// A one-off copy: it runs on the node the migrator is connected to, through the tables
		// under their own names, which place its rows as any other insert.
		return []string{statement}, nil
	}
	return nil, fmt.Errorf("cluster mode: statement of an unknown form: %.80q", statement)
}

func (c Cluster) on() string { return " ON CLUSTER " + c.Name }

func (c Cluster) q(name string) string { return c.Database + "." + name }

func placementOf(table string) (ClusterPlacement, error) {
	p, ok := clusterPlacements[table]
	if !ok {
		return p, fmt.Errorf("cluster mode: table %s has no placement (schemas/cluster_keys.go)", table)
	}
	return p, nil
}

func (c Cluster) createTable(statement string) ([]string, error) {
	m := createTableRe.FindStringSubmatch(statement)
	name, columns, engine, rest := m[1], m[2], m[3], m[4]
	replicated, ok := replicatedEngines[engine]
	if !ok {
		return nil, fmt.Errorf("cluster mode: table %s: engine %s has no replicated form here", name, engine)
	}
	var params string
	if strings.HasPrefix(rest, "(") {
		end := matchingParen(rest)
		if end < 0 {
			return nil, fmt.Errorf("cluster mode: table %s: unbalanced engine parameters", name)
		}
		params, rest = strings.TrimSpace(rest[1:end]), rest[end+1:]
	}
	p, err := placementOf(name)
	if err != nil {
		return nil, err
	}
	// A table kept whole on every node is one replication group over the cluster, so its path
	// has no shard, and its replica names need the shard to be unique across the group.
	table, zkPath, replica := name, "/clickhouse/tables/all/"+c.Database+"/"+name, "{shard}-{replica}"
	if p.Key != "" {
		table = LocalTable(name)
		zkPath, replica = "/clickhouse/tables/{shard}/"+c.Database+"/"+table, "{replica}"
	}
	args := "'" + zkPath + "', '" + replica + "'"
	if params != "" {
		args += ", " + params
	}
	out := []string{"CREATE TABLE IF NOT EXISTS " + c.q(table) + c.on() + " (" + columns + ") ENGINE = " +
		replicated + "(" + args + ")" + rest}
	if p.Key != "" {
		out = append(out, "CREATE TABLE IF NOT EXISTS "+c.q(name)+c.on()+" AS "+c.q(table)+
			"\nENGINE = Distributed("+c.Name+", "+c.Database+", "+table+", "+p.Key+")")
	}
	return out, nil
}

// matchingParen returns the index of the parenthesis closing the one s starts with, or -1.
func matchingParen(s string) int {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// A materialized view runs on every node over the rows inserted into the node's own source table
// and writes the node's own target table; both must be sharded by the same unit, or the target
// would hold rows on a shard its sharding key does not name (TestClusterViewsKeepTheirShard).
func (c Cluster) createMaterializedView(statement string) ([]string, error) {
	m := createMVRe.FindStringSubmatch(statement)
	name, target, body := m[1], m[2], m[3]
	sources := mvSourceRe.FindAllStringSubmatch(body, -1)
	if len(sources) != 1 {
		return nil, fmt.Errorf("cluster mode: view %s: want one FROM, found %d", name, len(sources))
	}
	source := sources[0][1]
	sp, err := placementOf(source)
	if err != nil {
		return nil, err
	}
	tp, err := placementOf(target)
	if err != nil {
		return nil, err
	}
	if sp.Unit != tp.Unit {
		return nil, fmt.Errorf("cluster mode: view %s reads %s (sharded by %s) and writes %s (by %s)", name, source, sp.Unit, target, tp.Unit)
	}
	from, to := source, target
	if sp.Key != "" {
		from, to = LocalTable(source), LocalTable(target)
	}
	body = mvSourceRe.ReplaceAllString(body, "FROM "+c.q(from))
	return []string{"CREATE MATERIALIZED VIEW IF NOT EXISTS " + c.q(name) + c.on() + " TO " + c.q(to) + " AS\n" + body}, nil
}

// A plain view reads the tables under their own names (Distributed or whole on the node), and
// its IN subqueries are GLOBAL: an analyst's session keeps ClickHouse's default, which refuses a
// subquery over a Distributed table inside a query over another, and the tables an IN compares
// need not share a sharding key.
func (c Cluster) createView(statement string) ([]string, error) {
	m := createViewRe.FindStringSubmatch(statement)
	name, body := m[1], m[2]
	body = fromJoinRe.ReplaceAllStringFunc(body, func(s string) string {
		g := fromJoinRe.FindStringSubmatch(s)
		if !knownRelation(g[3]) {
			return s
		}
		return g[1] + g[2] + c.q(g[3])
	})
	body = inSubqueryRe.ReplaceAllString(body, "GLOBAL IN (${1}SELECT")
	return []string{"CREATE VIEW IF NOT EXISTS " + c.q(name) + c.on() + " AS\n" + body}, nil
}

// knownRelation says whether a name after FROM or JOIN is a table or view of the migrations.
func knownRelation(name string) bool {
	if _, ok := clusterPlacements[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "analyst_")
}

// A column added to a sharded table is added to its local table on every node and to the
// Distributed table over it; a mutation runs on the local tables. The local tables are altered on
// one replica of each shard (EveryShard), not ON CLUSTER: on 18.16 the replicas of a shard race
// for an ALTER ON CLUSTER of a replicated table, and when the loser runs it again (the column is
// there: code 44) its DDL worker fails to mark the task done ("Node exists") and stops for good,
// so every later ON CLUSTER statement waits out its timeout on that node. ClickHouse 18.16 refuses
// an ALTER ON CLUSTER of a table that is not replicated on a cluster whose shards replicate
// themselves, so the Distributed table is altered on each node in turn (EveryNode). A table kept
// whole on every node is altered once, on this node: replication carries the change to every
// other replica of its group (ON CLUSTER would apply it once per shard, to the same group).
func (c Cluster) alter(statement string) ([]string, error) {
	m := alterRe.FindStringSubmatch(statement)
	name, verb, rest := m[1], m[2], m[3]
	p, err := placementOf(name)
	if err != nil {
		return nil, err
	}
	if p.Key == "" {
		return []string{"ALTER TABLE " + c.q(name) + " " + verb + " " + rest}, nil
	}
	out := []string{EveryShard + "ALTER TABLE " + c.q(LocalTable(name)) + " " + verb + " " + rest}
	if verb == "ADD COLUMN" {
		out = append(out, EveryNode+"ALTER TABLE "+c.q(name)+" "+verb+" "+rest)
	}
	return out, nil
}
