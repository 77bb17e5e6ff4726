package cli_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestCustomerExclusionCommands seeds the demo with `revtrack-dev seed-demo` (which excludes the
// fake data's excluded shops), then excludes, lists and lifts with `revtrack admin customer`, and
// checks the audit log.
func TestCustomerExclusionCommands(t *testing.T) {
	chc := testenv.ClickHouseConfig(t)
	rc := testenv.RedisConfig(t)
	run, runDev := runnerOf(t, cli.Execute, chc, rc), runnerOf(t, devcli.Execute, chc, rc)
	mustWith := func(run func(args ...string) (string, string, int), args ...string) string {
		t.Helper()
		out, logs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs)
		}
		return out
	}
	must := func(args ...string) string { t.Helper(); return mustWith(run, args...) }
	seedDemo := func() { t.Helper(); mustWith(runDev, "seed-demo") }
	list := func(args ...string) []controlplane.CustomerExclusion {
		t.Helper()
		var xs []controlplane.CustomerExclusion
		if err := json.Unmarshal([]byte(must(append([]string{"admin", "customer", "list", "--workspace", "demo"}, args...)...)), &xs); err != nil {
			t.Fatal(err)
		}
		return xs
	}

	var flagged []string
	for _, s := range partnerfake.Generate(partnerfake.DemoConfig(time.Now())).Shops {
		if s.Excluded {
			flagged = append(flagged, s.Domain)
		}
	}
	if len(flagged) == 0 {
		t.Fatal("the demo data flags no shop as excluded")
	}
	seedDemo()
	seedDemo() // a second run adds nothing
	var seeded []string
	for _, x := range list() {
		if !x.Excluded || x.AppID != "" || !strings.HasPrefix(x.Reason, "demo data") {
			t.Errorf("seeded rule %+v", x)
		}
		seeded = append(seeded, x.ShopDomain)
	}
	slices.Sort(flagged)
	if !slices.Equal(seeded, flagged) {
		t.Fatalf("seed-demo excluded %v, want %v", seeded, flagged)
	}

	var x controlplane.CustomerExclusion
	if err := json.Unmarshal([]byte(must("admin", "customer", "exclude", "--workspace", "demo", "--domain", "Zeta.myshopify.com",
		"--app", "demo-upsell", "--reason", "partner store")), &x); err != nil {
		t.Fatal(err)
	}
	if x.ShopDomain != "zeta.myshopify.com" || x.AppID != "demo-upsell" || !x.Excluded {
		t.Fatalf("exclude printed %+v", x)
	}
	if _, logs, code := run("admin", "customer", "exclude", "--workspace", "demo", "--domain", "zeta.myshopify.com", "--app", "nope"); code == 0 ||
		!strings.Contains(logs, "selected apps") {
		t.Fatalf("unselected app: exit %d: %s", code, logs)
	}
	if _, logs, code := run("admin", "customer", "exclude", "--workspace", "demo"); code == 0 || !strings.Contains(logs, "domain") {
		t.Fatalf("no domain: exit %d: %s", code, logs)
	}
	// Lifting a seeded rule: it stays lifted when the demo is seeded again.
	must("admin", "customer", "include", "--workspace", "demo", "--domain", flagged[0], "--reason", "not a partner after all")
	seedDemo()
	active := list()
	if len(active) != len(flagged) || slices.ContainsFunc(active, func(x controlplane.CustomerExclusion) bool { return x.ShopDomain == flagged[0] }) {
		t.Fatalf("rules in force after the lift and a new seed: %+v", active)
	}
	if all := list("--lifted"); len(all) != len(flagged)+1 {
		t.Fatalf("%d rules with lifted ones, want %d", len(all), len(flagged)+1)
	}

	var audit []controlplane.AuditEntry
	if err := json.Unmarshal([]byte(must("admin", "audit", "demo", "--limit", "500")), &audit); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range audit {
		if e.TargetType == "customer_exclusion" {
			if e.Actor != "cli:admin" {
				t.Errorf("actor %q", e.Actor)
			}
			counts[e.Action]++
		}
	}
	if counts["customer.exclude"] != len(flagged)+1 || counts["customer.include"] != 1 {
		t.Fatalf("audited %v, want %d exclusions and 1 lift", counts, len(flagged)+1)
	}
}
