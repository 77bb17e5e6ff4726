package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CurrentClickHouseFailure is one statement the current ClickHouse engine rejected.
type CurrentClickHouseFailure struct {
	Statement string `json:"statement"`
	Error     string `json:"error"`
}

// repoRoot is the module root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// OnCurrentClickHouse runs statements, in order, on the current ClickHouse engine embedded through
// chdb (installed by `make test` into .stack/chdb), because production runs current ClickHouse
// while the local server is 18.16. It returns the engine version and the rejected statements.
func OnCurrentClickHouse(t testing.TB, statements []string) (string, []CurrentClickHouseFailure) {
	t.Helper()
	py := os.Getenv("REVTRACK_CHDB_PYTHON")
	if py == "" {
		py = filepath.Join(repoRoot(), ".stack", "chdb", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("chdb's Python (%s) is missing: run `make test`, which installs it: %v", py, err)
	}
	req, _ := json.Marshal(map[string]any{"database": "revtrack", "statements": statements})
	cmd := exec.Command(py, filepath.Join(repoRoot(), "schemas", "compat", "chdb_check.py"))
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chdb check: %v\n%s", err, stderr.String())
	}
	var res struct {
		Version  string                     `json:"version"`
		Failures []CurrentClickHouseFailure `json:"failures"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("chdb check output %q: %v", out, err)
	}
	return res.Version, res.Failures
}

// Bind replaces each ? of q with the next literal, as the driver's client-side binding does, so
// that a parameterised query can be run by OnCurrentClickHouse.
func Bind(t testing.TB, q string, literals ...string) string {
	t.Helper()
	if strings.Count(q, "?") != len(literals) {
		t.Fatalf("%d placeholders, %d literals in %s", strings.Count(q, "?"), len(literals), q)
	}
	for _, l := range literals {
		q = strings.Replace(q, "?", l, 1)
	}
	return q
}
