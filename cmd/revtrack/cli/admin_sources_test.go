package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/tracking"
)

// TestSourceRotationAndStatusShowRefusals: `revtrack admin source rotate-public-key` remembers the
// old key's source, as the admin API does, and `revtrack admin tracking status` gives the edge's
// refusals for the source with the two conditions they answer, as the REST status does.
func TestSourceRotationAndStatusShowRefusals(t *testing.T) {
	ctx := testenv.Ctx(t)
	chc := testenv.ClickHouseConfig(t)
	rc := testenv.RedisConfig(t)
	run, runDev := runnerOf(t, cli.Execute, chc, rc), runnerOf(t, devcli.Execute, chc, rc)
	must := func(run func(args ...string) (string, string, int), args ...string) string {
		t.Helper()
		out, logs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs)
		}
		return out
	}
	must(runDev, "seed-demo")
	var created struct{ Source controlplane.Source }
	if err := json.Unmarshal([]byte(must(run, "admin", "source", "create", "demo", "--app", "demo-upsell", "--name", "CLI",
		"--origins", "https://cli.example.com")), &created); err != nil {
		t.Fatal(err)
	}
	src := created.Source
	var rotated controlplane.Source
	if err := json.Unmarshal([]byte(must(run, "admin", "source", "rotate-public-key", "demo", src.ID)), &rotated); err != nil {
		t.Fatal(err)
	}
	if rotated.PublicKey == src.PublicKey {
		t.Fatal("the public key did not change")
	}

	conn, err := clickhousex.Open(ctx, chc)
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := redisx.Open(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); rdb.Close() })
	store := controlplane.NewStore(conn, rdb, rc.KeyPrefix)
	if id, err := store.RetiredPublicKeySource(ctx, src.PublicKey); err != nil || id != src.ID {
		t.Fatalf("the rotated key names %q (%v), want %s", id, err, src.ID)
	}
	// What the edge records for a page on an origin the source does not allow.
	if err := store.RecordRefusedOrigin(ctx, src.ID, "https://www.cli.example.com"); err != nil {
		t.Fatal(err)
	}
	var st tracking.Troubleshooting
	if err := json.Unmarshal([]byte(must(run, "admin", "tracking", "status", "demo", src.ID)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Refusals == nil || len(st.Refusals.Origins) != 1 || st.Refusals.Origins[0].Origin != "https://www.cli.example.com" ||
		st.Refusals.Origins[0].Count != 1 || len(st.Refusals.Keys) != 0 {
		t.Fatalf("refusals %+v", st.Refusals)
	}
	if c := st.Conditions[0]; c.Code != tracking.ConditionOriginNotAllowed || !c.Checked || !c.Detected {
		t.Fatalf("origin condition %+v", c)
	}
	if c := st.Conditions[1]; c.Code != tracking.ConditionSourceUnavailable || !c.Checked || c.Detected {
		t.Fatalf("source condition %+v", c)
	}
}
