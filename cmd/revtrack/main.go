// Command revtrack runs revtrack's components; see `revtrack --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
