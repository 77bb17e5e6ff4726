// Package httpserver runs an http.Server until its context ends, then drains it. Every server of the
// process goes through Serve, so every one gets the same timeouts and request body limit.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Config bounds the server: how long a client may take to send a request and to read the answer,
// how long an idle keep-alive connection is kept, and how large a request body may be. A zero field
// takes its DefaultConfig value, so no server runs without a bound.
type Config struct {
	// ReadHeaderTimeout bounds reading the request line and headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, headers and body, from its first byte: a client
	// that sends its body slowly is cut off. It does not bound the handler (see guard).
	ReadTimeout time.Duration
	// WriteTimeout bounds a response, from the end of the request headers to its last byte: it
	// must exceed the slowest handler (reporting queries), or that handler's answer is cut.
	WriteTimeout time.Duration
	// LongWrites replaces WriteTimeout for requests to these exact paths (an MCP tool call runs
	// several REST requests in turn, so it may need a multiple of their budget).
	LongWrites map[string]time.Duration
	// IdleTimeout closes a keep-alive connection that starts no new request in time.
	IdleTimeout time.Duration
	// ShutdownTimeout is how long in-flight requests may finish once the context ends.
	ShutdownTimeout time.Duration
	// MaxBodyBytes bounds every request body. A larger one is answered 413 payload_too_large before
	// it is read into memory; a route may enforce less (the ingest edge does).
	MaxBodyBytes int64
}

// DefaultConfig suits the API edges: JSON bodies of at most 1 MiB, reporting answers within a
// minute (ClickHouse's per-query timeout is 30 s), keep-alive connections kept longer than common
// proxies keep theirs (nginx 60 s), so that the proxy, not this server, closes an idle one and never
// reuses a connection this server is closing.
func DefaultConfig() Config {
	return Config{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ShutdownTimeout:   15 * time.Second,
		MaxBodyBytes:      1 << 20,
	}
}

// withDefaults fills every zero bound from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	for _, f := range []struct{ v, def *time.Duration }{{&c.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&c.ReadTimeout, &d.ReadTimeout},
		{&c.WriteTimeout, &d.WriteTimeout}, {&c.IdleTimeout, &d.IdleTimeout}, {&c.ShutdownTimeout, &d.ShutdownTimeout}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	return c
}

// Validate checks the bounds of a configuration given by an operator.
func (c Config) Validate() error {
	var errs []error
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 || c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("http timeouts must be positive"))
	}
	if c.ReadTimeout < c.ReadHeaderTimeout {
		errs = append(errs, errors.New("http-read-timeout must be at least http-read-header-timeout: it includes the headers"))
	}
	for path, d := range c.LongWrites {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("write timeout of %s must be positive", path))
		}
	}
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, errors.New("http-max-body-bytes must be at least 1024"))
	}
	return errors.Join(errs...)
}

// NewServer is the http.Server Serve runs, with every bound of cfg applied to h.
func NewServer(h http.Handler, cfg Config) *http.Server {
	cfg = cfg.withDefaults()
	return &http.Server{
		Handler:           guard(h, cfg),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
	}
}

// Serve listens on ln and serves h until ctx is cancelled, then stops accepting and waits up to
// ShutdownTimeout for in-flight requests: an event that got a 2xx must have finished its Kafka write.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, cfg Config, log *slog.Logger) error {
	cfg = cfg.withDefaults()
	srv := NewServer(h, cfg)
	srv.BaseContext = func(net.Listener) context.Context { return context.WithoutCancel(ctx) }
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("http listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("http serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http serve: %w", err)
	}
	log.Info("http drained")
	return nil
}
