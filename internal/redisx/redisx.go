// Package redisx opens the Redis client shared by deduplication, rate limits, locks and the
// control-plane cache.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// Config locates Redis.
type Config struct {
	Addr     string
	Password string
	DB       int
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
	fs.StringVar(&c.Addr, "redis-addr", c.Addr, "Redis address host:port")
	fs.StringVar(&c.Password, "redis-password", c.Password, "Redis password")
	fs.IntVar(&c.DB, "redis-db", c.DB, "Redis database number")
	fs.StringVar(&c.KeyPrefix, "redis-key-prefix", c.KeyPrefix, "prefix of every Redis key")
	fs.DurationVar(&c.DialTimeout, "redis-dial-timeout", c.DialTimeout, "Redis connect timeout")
}

// Validate checks the Redis settings.
func (c Config) Validate() error {
	var errs []error
	if !strings.Contains(c.Addr, ":") {
		errs = append(errs, fmt.Errorf("redis-addr: %q is not host:port", c.Addr))
	}
	if c.DB < 0 {
		errs = append(errs, errors.New("redis-db: must not be negative"))
	}
	if c.KeyPrefix == "" {
		errs = append(errs, errors.New("redis-key-prefix: must not be empty"))
	}
	return errors.Join(errs...)
}

// Open returns a client and pings it.
func Open(ctx context.Context, c Config) (*redis.Client, error) {
	cl := redis.NewClient(&redis.Options{
		Addr:        c.Addr,
		Password:    c.Password,
		DB:          c.DB,
		DialTimeout: c.DialTimeout,
		ReadTimeout: 2 * time.Second,
	})
	if err := cl.Ping(ctx).Err(); err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("redis ping %s: %w", c.Addr, err)
	}
	return cl, nil
}
