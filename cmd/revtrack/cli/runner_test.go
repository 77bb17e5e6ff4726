package cli_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// cliRunner returns a function that runs the revtrack command line against the database of chc and
// a Redis key prefix of the test's own, returning its output, its logs and its exit code.
func cliRunner(t *testing.T, chc clickhousex.Config) func(args ...string) (string, string, int) {
	return runnerOf(t, cli.Execute, chc, testenv.RedisConfig(t))
}

// runnerOf is cliRunner for a command line of the given Execute (revtrack's or revtrack-dev's) and
// Redis, so two command lines can share one control plane.
func runnerOf(t *testing.T, execute func(context.Context, []string, io.Writer, io.Writer) int, chc clickhousex.Config,
	rc redisx.Config) func(args ...string) (string, string, int) {
	return func(args ...string) (string, string, int) {
		t.Helper()
		var out, logs bytes.Buffer
		args = append(args, "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database, "--redis-addr", rc.Addr,
			"--redis-key-prefix", rc.KeyPrefix)
		code := execute(context.Background(), args, &out, &logs)
		return out.String(), logs.String(), code
	}
}
