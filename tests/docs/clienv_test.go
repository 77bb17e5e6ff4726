package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runDefaultRe matches deploy/local/run's local-only settings: export NAME=${NAME:-default}.
var runDefaultRe = regexp.MustCompile(`(?m)^export (REVTRACK_[A-Z_]+)=\$\{([A-Z_]+):-([^}]*)\}$`)

// cliEnvExports runs deploy/local/cli-env with the test stack's name and the given variables, and
// returns the values it exports, as bash reads them.
func cliEnvExports(t *testing.T, root string, env ...string) map[string]string {
	t.Helper()
	const prog = `eval "$("$0")" || exit 1; env -0`
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", prog, filepath.Join(root, "deploy", "local", "cli-env"))
	cmd.Env = append([]string{"STACK_NAME=test", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("deploy/local/cli-env: %v", err)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if name, value, ok := strings.Cut(kv, "="); ok {
			vars[name] = value
		}
	}
	return vars
}

// TestCLIEnvHasRunsLocalSettings: the command line's documented environment (deploy/local/cli-env,
// docs/GETTING_STARTED.md step 2) gives every local-only setting deploy/local/run gives the server,
// with the same default, so `revtrack admin ads …` and `admin partner …` reach the same fakes with the
// same client and keys as the server `make run` started.
func TestCLIEnvHasRunsLocalSettings(t *testing.T) {
	root := repoRoot(t)
	run, err := os.ReadFile(filepath.Join(root, "deploy", "local", "run"))
	if err != nil {
		t.Fatal(err)
	}
	got := cliEnvExports(t, root)
	matches := runDefaultRe.FindAllStringSubmatch(string(run), -1)
	for _, m := range matches {
		name, def := m[1], m[3]
		if m[2] != name {
			continue
		}
		if got[name] != def {
			t.Errorf("deploy/local/run gives the server %s=%s, deploy/local/cli-env gives the command line %q", name, def, got[name])
		}
	}
	for _, name := range []string{"REVTRACK_KAFKA_BROKERS", "REVTRACK_CLICKHOUSE_ADDR", "REVTRACK_CLICKHOUSE_PASSWORD", "REVTRACK_REDIS_ADDR"} {
		if got[name] == "" {
			t.Errorf("cli-env does not export %s (deploy/local/stack env)", name)
		}
	}
	if got["BASE_URL"] != "http://127.0.0.1:8080" || !strings.HasPrefix(got["PATH"], filepath.Join(root, "bin")+":") {
		t.Errorf("BASE_URL %q, PATH %q: want make run's base URL and bin/ first", got["BASE_URL"], got["PATH"])
	}

	// What is set stays, as deploy/local/run keeps it: tests/docs relies on it.
	kept := cliEnvExports(t, root, "REVTRACK_ADS_OAUTH_CLIENT_ID=mine", "REVTRACK_HTTP_ADDR=127.0.0.1:9999", "BIN_DIR=/opt/rt")
	if kept["REVTRACK_ADS_OAUTH_CLIENT_ID"] != "mine" || kept["BASE_URL"] != "http://127.0.0.1:9999" || !strings.HasPrefix(kept["PATH"], "/opt/rt:") {
		t.Errorf("preset values not kept: client %q, BASE_URL %q, PATH %q", kept["REVTRACK_ADS_OAUTH_CLIENT_ID"], kept["BASE_URL"], kept["PATH"])
	}
	if len(matches) == 0 && !strings.Contains(string(run), "cli-env") {
		t.Error("deploy/local/run sets no local default this test recognises and does not use cli-env: update the test")
	}
}
