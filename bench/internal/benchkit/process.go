// Package benchkit is what the query, ingest and upload benchmarks share: running revtrack inside
// the benchmark's process against a local stack (a Sandbox of the test stack for ingest and
// upload), clearing what a run leaves on that stack, describing the machine the numbers come from,
// CPU accounting, percentiles and number formatting. The benchmarks report through it, so one fix
// reaches all of them and their reports stay comparable.
package benchkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
)

// Env is the value of the environment variable name, or def when it is unset or empty: the
// REVTRACK_* variables that `deploy/local/stack env` prints point a benchmark at another stack.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Process is one revtrack command running inside the benchmark's process: no binary to build, and
// its CPU time is the benchmark's own, which the reports account for.
type Process struct {
	BaseURL string  // http://127.0.0.1:<port> of the running command
	Logs    *Capped // what the command logs, shown when something fails

	cancel context.CancelFunc
	done   chan int
}

// Start runs `revtrack <command> --http-addr <free loopback port> <args…>` and waits up to ready
// until /readyz answers 200. When the command exits before that, its exit code stays for Stop, so
// a caller that always stops (and cleans up) after a failed start still reports it.
func (p *Process) Start(ctx context.Context, command string, args []string, ready time.Duration) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	p.BaseURL = "http://" + addr
	full := append([]string{command, "--http-addr", addr}, args...)
	// The command outlives a cancelled ctx so that Stop, not an interrupt, decides when it drains.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel, p.done = cancel, make(chan int, 1)
	go func() { p.done <- cli.Execute(rctx, full, p.Logs, p.Logs) }()

	deadline := time.Now().Add(ready)
	for {
		select {
		case code := <-p.done:
			p.done <- code
			return fmt.Errorf("revtrack %s exited with %d before it was ready:\n%s", command, code, p.Logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(p.BaseURL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("revtrack %s not ready within %s:\n%s", command, within(ready), p.Logs)
		}
	}
}

// Stop ends the running command (drain, commit, flush) and waits up to wait for it; without a
// running command it does nothing.
func (p *Process) Stop(wait time.Duration) error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	defer func() { p.cancel, p.done = nil, nil }()
	select {
	case code := <-p.done:
		if code != 0 {
			return fmt.Errorf("revtrack exited with %d:\n%s", code, p.Logs)
		}
		return nil
	case <-time.After(wait):
		return errors.New("revtrack did not stop within " + within(wait))
	}
}

// within words a timeout for a person: "a minute", "2 minutes", "45s".
func within(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "a minute"
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	default:
		return fmt.Sprintf("%ds", d/time.Second)
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
