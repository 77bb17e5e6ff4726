package devcli_test

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

var seedLine = regexp.MustCompile(`^team=demo api_key=(revtrack_sk_\w+) tracker_pk=(tracker_pk_\w+) tracker_sk=(tracker_sk_\w+) demo_page=(http://127\.0\.0\.1:\d+/) email=owner@demo\.example password=([\w-]{24})\n$`)

// seedDemo runs `revtrack-dev seed-demo` and returns the API key, the public and the private key it
// printed.
func seedDemo(t *testing.T, chc clickhousex.Config, rc redisx.Config) (apiKey, pk, sk string) {
	t.Helper()
	var out, logs bytes.Buffer
	code := devcli.Execute(context.Background(), []string{"seed-demo", "--clickhouse-addr", chc.Addr,
		"--clickhouse-database", chc.Database, "--redis-addr", rc.Addr, "--redis-key-prefix", rc.KeyPrefix}, &out, &logs)
	if code != 0 {
		t.Fatalf("seed-demo: %s", logs.String())
	}
	m := seedLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("seed-demo printed %q", out.String())
	}
	return m[1], m[2], m[3]
}

// TestSeedDemoIsRepeatable runs `revtrack-dev seed-demo` twice, as two `make run`s would: the
// workspace and source are created once, and each run prints fresh keys that revtrack's own admin
// commands then find.
func TestSeedDemoIsRepeatable(t *testing.T) {
	chc := testenv.ClickHouseConfig(t)
	rc := testenv.RedisConfig(t)
	key1, pk1, sk1 := seedDemo(t, chc, rc)
	key2, pk2, sk2 := seedDemo(t, chc, rc)
	if key1 == key2 || sk1 == sk2 {
		t.Fatal("a second run must print new keys (keys are shown once)")
	}
	if pk1 != pk2 {
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

// TestHelpOfEveryTool: each tool `make run` starts is a command of revtrack-dev.
func TestHelpOfEveryTool(t *testing.T) {
	for _, name := range []string{"partner-api", "google-api", "demo-page", "seed-demo", "seed-tracking"} {
		var out, logs bytes.Buffer
		if code := devcli.Execute(context.Background(), []string{name, "--help"}, &out, &logs); code != 0 || !bytes.Contains(out.Bytes(), []byte("revtrack-dev "+name)) {
			t.Errorf("%s --help: exit %d: %s%s", name, code, out.String(), logs.String())
		}
	}
}
