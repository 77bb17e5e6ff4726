package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/internal/testenv"
)

var seedLine = regexp.MustCompile(`^team=demo api_key=(revtrack_sk_\w+) tracker_pk=(tracker_pk_\w+) tracker_sk=(tracker_sk_\w+) demo_page=(http://127\.0\.0\.1:\d+/)\n$`)

// TestSeedDemoIsRepeatable runs `revtrack admin seed-demo` twice, as two `make run`s would: the
// workspace and source are created once, and each run prints fresh keys.
func TestSeedDemoIsRepeatable(t *testing.T) {
	chc := testenv.ClickHouseConfig(t)
	rc := testenv.RedisConfig(t)
	seed := func() []string {
		var out, logs bytes.Buffer
		code := cli.Execute(context.Background(), []string{"admin", "seed-demo", "--clickhouse-addr", chc.Addr,
			"--clickhouse-database", chc.Database, "--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix}, &out, &logs)
		if code != 0 {
			t.Fatalf("seed-demo: %s", logs.String())
		}
		m := seedLine.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("seed-demo printed %q", out.String())
		}
		return m[1:]
	}
	first, second := seed(), seed()
	if first[0] == second[0] || first[2] == second[2] {
		t.Fatal("a second run must print new keys (keys are shown once)")
	}
	if first[1] != second[1] {
		t.Fatal("the demo source must be created once and keep its public key")
	}
	for _, args := range [][]string{{"admin", "tracking", "events", "demo"}, {"admin", "tracking", "funnel", "demo", "--group-by", "utm_campaign"},
		{"admin", "tracking", "ledger", "demo"}, {"admin", "source", "list", "demo"}} {
		var out, logs bytes.Buffer
		args = append(args, "--clickhouse-addr", chc.Addr, "--clickhouse-database", chc.Database, "--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix)
		if code := cli.Execute(context.Background(), args, &out, &logs); code != 0 || out.Len() == 0 {
			t.Errorf("%v: exit %d: %s", args[:3], code, logs.String())
		}
	}
}
