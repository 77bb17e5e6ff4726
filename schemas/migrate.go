// Package schemas holds every contract revtrack stores or streams: the ClickHouse migrations, the
// Kafka topic declarations, the Go types of every Kafka message and their JSON schemas, and the
// request bodies the tracking edge accepts (requests_tracking.go).
package schemas

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migration is one versioned SQL file.
type Migration struct {
	Version    uint32
	Name       string
	Checksum   string
	Statements []string
}

var fileRe = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migrations returns the embedded migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		m := fileRe.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		v, _ := strconv.ParseUint(m[1], 10, 32)
		sum := sha256.Sum256(body)
		out = append(out, Migration{
			Version:    uint32(v),
			Name:       m[2],
			Checksum:   hex.EncodeToString(sum[:]),
			Statements: SplitStatements(string(body)),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations with version %04d", out[i].Version)
		}
	}
	return out, nil
}

// SplitStatements drops comment lines and splits on a semicolon that ends a line. Migrations are
// written so that no statement contains such a semicolon elsewhere.
func SplitStatements(sql string) []string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	var out []string
	for _, s := range strings.Split(b.String(), ";\n") {
		if s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), ";")); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Locker serialises migrators across processes; two instances starting at once must not interleave.
type Locker interface {
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(context.Context) error, err error)
}

// Migrator applies pending migrations to one database and records them.
type Migrator struct {
	// Server is a connection to the server's default database, used to create Database.
	Server driver.Conn
	// DB is a connection to Database itself.
	DB       func(ctx context.Context) (driver.Conn, error)
	Database string
	Locker   Locker
	Log      *slog.Logger
	// Cluster names the remote_servers cluster to create the tables on (cluster.go); empty for
	// a single node.
	Cluster string
	// Node connects to one node of the cluster (host:port of the native protocol, as the cluster's
	// definition names it), for the statements that run on each node in turn (EveryNode).
	Node func(ctx context.Context, addr string) (driver.Conn, error)
}

const migrationsTable = "schema_migrations"

// MigrationsTableDDL creates the table that records applied migrations.
const MigrationsTableDDL = `CREATE TABLE IF NOT EXISTS ` + migrationsTable + ` (
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime('UTC')
) ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version`

// Result says what one run did.
type Result struct {
	Applied []uint32
	Current uint32
}

// Run creates the database, takes the lock, and applies every migration not yet recorded. It is
// idempotent: a second run applies nothing. Every statement is CREATE TABLE IF NOT EXISTS or an ADD
// COLUMN whose duplicate error is ignored, so a process that dies between applying a migration and
// recording it leaves a state the next run completes.
func (m *Migrator) Run(ctx context.Context) (Result, error) {
	all, err := Migrations()
	if err != nil {
		return Result{}, err
	}
	cl := Cluster{Name: m.Cluster, Database: m.Database}
	onCluster := ""
	if m.Cluster != "" {
		onCluster = cl.on()
	}
	if err := m.Server.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+m.Database+onCluster); err != nil {
		return Result{}, fmt.Errorf("create database %s: %w", m.Database, err)
	}
	unlock, err := m.Locker.Lock(ctx, "migrate:"+m.Database, 2*time.Minute)
	if err != nil {
		return Result{}, fmt.Errorf("migration lock: %w", err)
	}
	defer func() { _ = unlock(context.WithoutCancel(ctx)) }()

	db, err := m.DB(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := m.createMigrationsTable(ctx, db, cl); err != nil {
		return Result{}, err
	}
	applied, err := appliedMigrations(ctx, db)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, mg := range all {
		if sum, ok := applied[mg.Version]; ok {
			if sum != mg.Checksum {
				return res, fmt.Errorf("migration %04d_%s was changed after it was applied; add a new migration instead", mg.Version, mg.Name)
			}
			res.Current = mg.Version
			continue
		}
		statements := mg.Statements
		if m.Cluster != "" {
			if statements, err = clusterStatements(cl, mg); err != nil {
				return res, err
			}
		}
		for i, st := range statements {
			if err := m.exec(ctx, db, st); err != nil {
				return res, fmt.Errorf("migration %04d_%s statement %d: %w", mg.Version, mg.Name, i+1, err)
			}
		}
		if err := record(ctx, db, mg); err != nil {
			return res, err
		}
		m.Log.Info("migration applied", "version", mg.Version, "name", mg.Name)
		res.Applied = append(res.Applied, mg.Version)
		res.Current = mg.Version
	}
	return res, nil
}

var addColumnRe = regexp.MustCompile(`(?is)^ALTER TABLE \S+ (ON CLUSTER \S+ )?ADD COLUMN `)

// alreadyApplied recognises an ADD COLUMN that a crashed earlier run already applied. ClickHouse
// 18.16 has no ADD COLUMN IF NOT EXISTS, so the migration uses a plain ADD COLUMN (valid on every
// version) and the duplicate-column error (code 44 on 18.16, 15 on current versions) means done.
func alreadyApplied(statement string, err error) bool {
	var ex *clickhouse.Exception
	return addColumnRe.MatchString(statement) && errors.As(err, &ex) && (ex.Code == 44 || ex.Code == 15) &&
		strings.Contains(ex.Message, "already exists")
}

// exec runs one statement: on the connected node, on every node of the cluster in turn, or on
// one replica of each shard (the first that answers). A column a crashed earlier run already
// added counts as added, on each node.
func (m *Migrator) exec(ctx context.Context, db driver.Conn, st string) error {
	everyNode, everyShard := strings.HasPrefix(st, EveryNode), strings.HasPrefix(st, EveryShard)
	if !everyNode && !everyShard {
		if err := db.Exec(ctx, st); err != nil && !alreadyApplied(st, err) {
			return err
		}
		return nil
	}
	st = strings.TrimPrefix(strings.TrimPrefix(st, EveryNode), EveryShard)
	if m.Node == nil {
		return errors.New("cluster mode: no way to connect to each node (Migrator.Node)")
	}
	shards, err := ClusterShards(ctx, db, m.Cluster)
	if err != nil {
		return err
	}
	run := func(addr string) (connected bool, err error) {
		conn, err := m.Node(ctx, addr)
		if err != nil {
			return false, fmt.Errorf("node %s: %w", addr, err)
		}
		err = conn.Exec(ctx, st)
		_ = conn.Close()
		if err != nil && !alreadyApplied(st, err) {
			return true, fmt.Errorf("node %s: %w", addr, err)
		}
		return true, nil
	}
	for _, replicas := range shards {
		if everyNode {
			for _, addr := range replicas {
				if _, err := run(addr); err != nil {
					return err
				}
			}
			continue
		}
		var errs []error
		for _, addr := range replicas {
			connected, err := run(addr)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err)
			if connected {
				break // the replica refused the statement: another would too
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	return nil
}

// Querier is what listing a cluster's nodes needs of a connection.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// ClusterNodes lists the native-protocol address of every node of the cluster, as the connected
// node's configuration names them.
func ClusterNodes(ctx context.Context, db Querier, cluster string) ([]string, error) {
	shards, err := ClusterShards(ctx, db, cluster)
	return slices.Concat(shards...), err
}

// ClusterShards lists the native-protocol addresses of the cluster's nodes per shard, replicas in
// their order, as the connected node's configuration names them.
func ClusterShards(ctx context.Context, db Querier, cluster string) ([][]string, error) {
	rows, err := db.Query(ctx, selectClusterNodes, cluster)
	if err != nil {
		return nil, fmt.Errorf("list the nodes of cluster %s: %w", cluster, err)
	}
	defer rows.Close()
	var (
		out  [][]string
		last uint32
	)
	for rows.Next() {
		var (
			shard uint32
			host  string
			port  uint16
		)
		if err := rows.Scan(&shard, &host, &port); err != nil {
			return nil, err
		}
		if len(out) == 0 || shard != last {
			out, last = append(out, nil), shard
		}
		out[len(out)-1] = append(out[len(out)-1], net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster %s: no node in system.clusters", cluster)
	}
	return out, nil
}

const selectClusterNodes = `SELECT shard_num, host_name, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num`

// createMigrationsTable creates the bookkeeping table. On a cluster it is kept whole on every node
// (cluster_keys.go), and a database whose table is not replicated was migrated as a single node:
// its tables exist unsharded, and CREATE … IF NOT EXISTS would silently leave them so.
func (m *Migrator) createMigrationsTable(ctx context.Context, db driver.Conn, cl Cluster) error {
	ddl := []string{MigrationsTableDDL}
	if m.Cluster != "" {
		var err error
		if ddl, err = cl.ClusterDDL(MigrationsTableDDL); err != nil {
			return err
		}
	}
	for _, st := range ddl {
		if err := db.Exec(ctx, st); err != nil {
			return fmt.Errorf("create %s: %w", migrationsTable, err)
		}
	}
	if m.Cluster == "" {
		return nil
	}
	var engine string
	if err := db.QueryRow(ctx, selectTableEngine, m.Database, migrationsTable).Scan(&engine); err != nil {
		return fmt.Errorf("read %s engine: %w", migrationsTable, err)
	}
	if !strings.HasPrefix(engine, "Replicated") {
		return fmt.Errorf("database %s was migrated as a single node (%s is %s): cluster mode needs a new database", m.Database, migrationsTable, engine)
	}
	return nil
}

const selectTableEngine = `SELECT engine FROM system.tables WHERE database = ? AND name = ?`

func clusterStatements(cl Cluster, mg Migration) ([]string, error) {
	var out []string
	for _, st := range mg.Statements {
		ddl, err := cl.ClusterDDL(st)
		if err != nil {
			return nil, fmt.Errorf("migration %04d_%s: %w", mg.Version, mg.Name, err)
		}
		out = append(out, ddl...)
	}
	return out, nil
}

func appliedMigrations(ctx context.Context, db driver.Conn) (map[uint32]string, error) {
	rows, err := db.Query(ctx, "SELECT version, argMax(checksum, applied_at) FROM "+migrationsTable+" GROUP BY version")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", migrationsTable, err)
	}
	defer rows.Close()
	out := map[uint32]string{}
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, err
		}
		out[v] = sum
	}
	return out, rows.Err()
}

func record(ctx context.Context, db driver.Conn, mg Migration) error {
	b, err := db.PrepareBatch(ctx, "INSERT INTO "+migrationsTable+" (version, name, checksum, applied_at)")
	if err != nil {
		return fmt.Errorf("record migration %04d: prepare: %w", mg.Version, err)
	}
	if err := b.Append(mg.Version, mg.Name, mg.Checksum, time.Now().UTC()); err != nil {
		return fmt.Errorf("record migration %04d: append: %w", mg.Version, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("record migration %04d: send: %w", mg.Version, err)
	}
	return nil
}

// MigrationStatements returns every statement of the embedded migrations, in the order they run.
func MigrationStatements() ([]string, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Statements...)
	}
	return out, nil
}
