// Package redisx opens the Redis client shared by deduplication, rate limits, locks and the
// control-plane cache: one Redis, a Sentinel-watched primary, or a Redis Cluster.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// Config locates Redis.
type Config struct {
	// Addr is one host:port, or a comma-separated list: a Redis Cluster's seed nodes (Cluster) or
	// the Sentinels (MasterName).
	Addr string
	// Cluster speaks the Redis Cluster protocol: keys spread over the primaries by slot.
	Cluster bool
	// MasterName is the Sentinel name of the primary; Addr then lists the Sentinels.
	MasterName string
	Password   string
	DB         int
	// KeyPrefix namespaces every key, so tests (and several deployments) can share one server.
	KeyPrefix   string
	DialTimeout time.Duration
}

// DefaultConfig targets the local stack.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:16379", KeyPrefix: "revtrack:", DialTimeout: 2 * time.Second}
}

// RegisterFlags binds the Redis flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "redis-addr", c.Addr, "Redis address host:port; with --redis-cluster or --redis-master-name a comma-separated list "+
		"(the cluster's seed nodes, or the Sentinels)")
	fs.BoolVar(&c.Cluster, "redis-cluster", c.Cluster, "Redis is a Redis Cluster (--redis-addr lists some of its nodes)")
	fs.StringVar(&c.MasterName, "redis-master-name", c.MasterName, "Sentinel name of the Redis primary (--redis-addr lists the Sentinels)")
	fs.StringVar(&c.Password, "redis-password", c.Password, "Redis password")
	fs.IntVar(&c.DB, "redis-db", c.DB, "Redis database number")
	fs.StringVar(&c.KeyPrefix, "redis-key-prefix", c.KeyPrefix, "prefix of every Redis key")
	fs.DurationVar(&c.DialTimeout, "redis-dial-timeout", c.DialTimeout, "Redis connect timeout")
}

// Addrs is Addr split at its commas.
func (c Config) Addrs() []string {
	var out []string
	for _, a := range strings.Split(c.Addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Validate checks the Redis settings.
func (c Config) Validate() error {
	var errs []error
	addrs := c.Addrs()
	if len(addrs) == 0 {
		errs = append(errs, errors.New("redis-addr: must not be empty"))
	}
	for _, a := range addrs {
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			errs = append(errs, fmt.Errorf("redis-addr: %q is not host:port", a))
		}
	}
	if c.Cluster && c.MasterName != "" {
		errs = append(errs, errors.New("redis-cluster and redis-master-name exclude each other: a Redis Cluster fails over by itself"))
	}
	if len(addrs) > 1 && !c.Cluster && c.MasterName == "" {
		errs = append(errs, errors.New("redis-addr: several addresses need --redis-cluster (cluster nodes) or --redis-master-name (Sentinels)"))
	}
	if c.Cluster && c.DB != 0 {
		errs = append(errs, errors.New("redis-db: a Redis Cluster has only database 0"))
	}
	if c.DB < 0 {
		errs = append(errs, errors.New("redis-db: must not be negative"))
	}
	if c.KeyPrefix == "" {
		errs = append(errs, errors.New("redis-key-prefix: must not be empty"))
	}
	// The first {…} of a key is its hash tag; the keys that must share a slot put theirs after the
	// prefix, so a brace in the prefix would replace their tags with an accidental one.
	if c.Cluster && strings.ContainsAny(c.KeyPrefix, "{}") {
		errs = append(errs, fmt.Errorf("redis-key-prefix: %q must not hold { or } on a Redis Cluster (they would make the hash tag of every key)", c.KeyPrefix))
	}
	return errors.Join(errs...)
}

// Open returns a client and pings it: a *redis.Client for one address (as before Sentinel and
// Cluster support), a Sentinel failover client with MasterName, a *redis.ClusterClient with Cluster.
func Open(ctx context.Context, c Config) (redis.UniversalClient, error) {
	const readTimeout = 2 * time.Second
	var cl redis.UniversalClient
	switch {
	case c.Cluster:
		cl = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:       c.Addrs(),
			Password:    c.Password,
			DialTimeout: c.DialTimeout,
			ReadTimeout: readTimeout,
		})
	case c.MasterName != "":
		cl = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:    c.MasterName,
			SentinelAddrs: c.Addrs(),
			Password:      c.Password,
			DB:            c.DB,
			DialTimeout:   c.DialTimeout,
			ReadTimeout:   readTimeout,
		})
	default:
		cl = redis.NewClient(&redis.Options{
			Addr:        c.Addr,
			Password:    c.Password,
			DB:          c.DB,
			DialTimeout: c.DialTimeout,
			ReadTimeout: readTimeout,
		})
	}
	if err := cl.Ping(ctx).Err(); err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("redis ping %s: %w", c.Addr, err)
	}
	return cl, nil
}
