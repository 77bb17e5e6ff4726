// Command revtrack-dev runs the development tools of a local revtrack (the platform fakes, the demo
// page, the demo workspace); see `revtrack-dev --help`. It is not part of the product: the
// production binary and image are cmd/revtrack alone.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/revtrack/revtrack/devtools/devcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := devcli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
