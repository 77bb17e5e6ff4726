// Package httpserver runs an http.Server until its context ends, then drains it.
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

// Config bounds the server's timeouts.
type Config struct {
	ReadHeaderTimeout time.Duration
	ShutdownTimeout   time.Duration
}

// Serve listens on ln and serves h until ctx is cancelled, then stops accepting and waits up to
// ShutdownTimeout for in-flight requests: an event that got a 2xx must have finished its Kafka write.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, cfg Config, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
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
