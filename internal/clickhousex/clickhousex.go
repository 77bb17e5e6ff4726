// Package clickhousex opens ClickHouse connections over the native protocol (the driver's HTTP
// protocol fails against the 18.16 server we run locally).
package clickhousex

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/spf13/pflag"
)

// Config locates the server and the database that holds every revtrack table.
type Config struct {
	Addr        string
	Database    string
	Username    string
	Password    string
	DialTimeout time.Duration
	// ReadTimeout bounds a single query; a stuck query fails instead of blocking a consumer forever.
	ReadTimeout  time.Duration
	MaxOpenConns int
	// UsersDir is the server's users.d directory, where per-workspace analyst users are written
	// (controlplane/analystaccess); empty leaves that feature off. ClickHouse 18.16 has no CREATE USER.
	UsersDir string
	// AnalystRefresh is how often the process component copies each workspace's rows into its
	// analyst database; 0 leaves it to `revtrack admin analyst refresh --all`.
	AnalystRefresh time.Duration
	// Cluster names a remote_servers cluster of the servers' configuration; empty (the default)
	// is a single node. With it, `revtrack migrate` creates every table ON CLUSTER as replicated
	// local tables behind Distributed ones (schemas/cluster.go, deploy/README.md "ClickHouse").
	Cluster string
}

// DefaultConfig targets the local stack. The user is revtrack's own, never the server's built-in
// `default` (whose password nothing should know: deploy/local/stack, deploy/docker-compose.yml).
func DefaultConfig() Config {
	return Config{
		Addr:         "127.0.0.1:19000",
		Database:     "revtrack",
		Username:     "revtrack",
		DialTimeout:  5 * time.Second,
		ReadTimeout:  30 * time.Second,
		MaxOpenConns: 16,
		// Analysts see each workspace's copy as of its last refresh (docs/ANALYSTS.md).
		AnalystRefresh: time.Hour,
	}
}

// RegisterFlags binds the ClickHouse flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "clickhouse-addr", c.Addr, "ClickHouse native-protocol address host:port")
	fs.StringVar(&c.Database, "clickhouse-database", c.Database, "ClickHouse database holding revtrack's tables")
	fs.StringVar(&c.Username, "clickhouse-username", c.Username, "ClickHouse user")
	fs.StringVar(&c.Password, "clickhouse-password", c.Password, "ClickHouse password")
	fs.DurationVar(&c.DialTimeout, "clickhouse-dial-timeout", c.DialTimeout, "ClickHouse connect timeout")
	fs.DurationVar(&c.ReadTimeout, "clickhouse-read-timeout", c.ReadTimeout, "ClickHouse per-query read timeout")
	fs.IntVar(&c.MaxOpenConns, "clickhouse-max-open-conns", c.MaxOpenConns, "ClickHouse connection pool size")
	fs.StringVar(&c.UsersDir, "clickhouse-users-dir", c.UsersDir, "the ClickHouse server's users.d directory, where revtrack admin analyst "+
		"and /api/admin/analyst-access write per-workspace analyst users (empty: that access is off)")
	fs.DurationVar(&c.AnalystRefresh, "clickhouse-analyst-refresh-interval", c.AnalystRefresh, "how often the process component "+
		"copies each workspace's current rows into its analyst database, one process of the deployment at a time (0: never)")
	fs.StringVar(&c.Cluster, "clickhouse-cluster", c.Cluster, "name of the ClickHouse remote_servers cluster revtrack's tables span "+
		"(replicated shards behind Distributed tables; empty: a single node)")
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Validate checks the ClickHouse settings. The database name is used as an identifier in DDL, so it
// must be a plain identifier.
func (c Config) Validate() error {
	var errs []error
	if !strings.Contains(c.Addr, ":") {
		errs = append(errs, fmt.Errorf("clickhouse-addr: %q is not host:port", c.Addr))
	}
	if !identRe.MatchString(c.Database) {
		errs = append(errs, fmt.Errorf("clickhouse-database: %q is not a plain identifier", c.Database))
	}
	if c.DialTimeout <= 0 || c.ReadTimeout <= 0 {
		errs = append(errs, errors.New("clickhouse timeouts must be positive"))
	}
	if c.Cluster != "" && !identRe.MatchString(c.Cluster) {
		errs = append(errs, fmt.Errorf("clickhouse-cluster: %q is not a plain identifier", c.Cluster))
	}
	if c.AnalystRefresh < 0 {
		errs = append(errs, errors.New("clickhouse-analyst-refresh-interval: must not be negative"))
	}
	if c.MaxOpenConns < 1 {
		errs = append(errs, errors.New("clickhouse-max-open-conns: must be at least 1"))
	}
	return errors.Join(errs...)
}

// Open connects to the configured database and pings it.
func Open(ctx context.Context, c Config) (driver.Conn, error) {
	return open(ctx, c, c.Database)
}

// OpenServer connects to the server's default database; used to create the configured database.
func OpenServer(ctx context.Context, c Config) (driver.Conn, error) {
	return open(ctx, c, "default")
}

func open(ctx context.Context, c Config, db string) (driver.Conn, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:         []string{c.Addr},
		Protocol:     clickhouse.Native,
		Auth:         clickhouse.Auth{Database: db, Username: c.Username, Password: c.Password},
		DialTimeout:  c.DialTimeout,
		ReadTimeout:  c.ReadTimeout,
		MaxOpenConns: c.MaxOpenConns,
		// Every open connection may stay idle: a request that runs its queries concurrently (the
		// reporting summary runs up to eight) would otherwise close the connections beyond the idle
		// limit when it ends and dial them again on the next request.
		MaxIdleConns: c.MaxOpenConns,
		Settings:     c.sessionSettings(),
	})
	if err != nil {
		return nil, fmt.Errorf("clickhouse open %s: %w", c.Addr, err)
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("clickhouse ping %s/%s: %w", c.Addr, db, err)
	}
	if c.Cluster != "" {
		if err := checkClusterProfile(ctx, conn); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	return rereadConn{conn}, nil
}

// sessionSettings are the query settings every connection sends. A single node needs none. On a
// cluster, inserts through a Distributed table are synchronous, so that a write acknowledged to a
// consumer is on its shard, not queued on the node that took it.
func (c Config) sessionSettings() clickhouse.Settings {
	if c.Cluster == "" {
		return nil
	}
	return clickhouse.Settings{"insert_distributed_sync": 1}
}

// clusterProfile is what revtrack's user profile must set on every node of a cluster. The driver
// cannot send a setting of type string to ClickHouse 18.16 (its protocol sends settings in their
// own binary types, and the driver encodes only numbers for it), so these come from the profile.
// An IN or JOIN whose subquery reads a Distributed table inside a query on a Distributed table is
// refused by default ('deny'); 'global' runs the subquery once and ships its result to every
// shard, right whatever the two tables' sharding keys are. 'in_order' sends reads and writes to
// the first healthy replica of each shard in the cluster's order, so a read right after a write
// (the sessionizer's, the identity join's) finds it without waiting for replication.
var clusterProfile = map[string]string{"distributed_product_mode": "global", "load_balancing": "in_order"}

// checkClusterProfile refuses a cluster connection whose profile lacks clusterProfile: queries
// would be refused, or read a replica that has not caught up.
func checkClusterProfile(ctx context.Context, conn driver.Conn) error {
	rows, err := conn.Query(ctx, "SELECT name, value FROM system.settings WHERE name IN ('distributed_product_mode', 'load_balancing')")
	if err != nil {
		return fmt.Errorf("clickhouse cluster settings: %w", err)
	}
	defer rows.Close()
	var errs []error
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return err
		}
		if want := clusterProfile[name]; value != want {
			errs = append(errs, fmt.Errorf("%s is %q", name, value))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clickhouse-cluster: the user's profile must set distributed_product_mode = 'global' and load_balancing = 'in_order' "+
			"on every node (deploy/README.md, \"ClickHouse\"): %w", err)
	}
	return rows.Err()
}
