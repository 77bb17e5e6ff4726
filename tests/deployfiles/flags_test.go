package deployfiles_test

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/cmd/revtrack/config"
)

// binaryEnv maps every REVTRACK_* variable the revtrack binary reads to its flag, from the command
// tree itself (a variable fills the flag of the same name, config.ApplyEnv).
func binaryEnv() (map[string]string, *cobra.Command) {
	root := cli.New(io.Discard, io.Discard)
	env := map[string]string{}
	add := func(f *pflag.Flag) { env[config.EnvName(f.Name)] = f.Name }
	root.PersistentFlags().VisitAll(add)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return env, root
}

// revtrackVar matches a REVTRACK_* name; one right after "${" is a Compose interpolation read on
// the host (REVTRACK_TAG, the image tag), not a setting of the binary.
var revtrackVar = regexp.MustCompile(`(\$\{)?REVTRACK_[A-Z0-9_]+`)

func revtrackVars(s string) []string {
	var out []string
	for _, m := range revtrackVar.FindAllString(s, -1) {
		if !strings.HasPrefix(m, "${") {
			out = append(out, m)
		}
	}
	return out
}

// TestComposeRevtrackVariablesAreFlags: every REVTRACK_* name in the Compose files and the Dockerfile
// (settings and comments alike) is a variable the binary reads, every revtrack service runs one of
// its commands, and the settings of each pass the binary's own validation, the servers' refusal of
// the development encryption key included.
func TestComposeRevtrackVariablesAreFlags(t *testing.T) {
	env, root := binaryEnv()
	if len(env) < 50 {
		t.Fatalf("only %d variables found in the command tree", len(env))
	}
	dockerfile := readDeployFile(t, "Dockerfile")
	for _, m := range revtrackVars(dockerfile) {
		if _, ok := env[m]; !ok {
			t.Errorf("Dockerfile: %s is not a variable of the revtrack binary", m)
		}
	}
	for _, name := range composeFiles {
		t.Run(name, func(t *testing.T) {
			f := loadCompose(t, name)
			for _, m := range revtrackVars(f.raw) {
				if _, ok := env[m]; !ok {
					t.Errorf("%s is not a variable of the revtrack binary", m)
				}
			}
			for sname, s := range f.Services {
				if !s.isRevtrack() {
					continue
				}
				cmd, _, err := root.Find(s.Command)
				if err != nil || cmd == root {
					t.Errorf("%s runs %v, which is no revtrack command", sname, s.Command)
					continue
				}
				cfg := config.Default()
				fs := pflag.NewFlagSet(sname, pflag.ContinueOnError)
				cfg.RegisterFlags(fs)
				for k, v := range s.env() {
					if fs.Lookup(env[k]) == nil {
						continue // reported above, or a command's own flag
					}
					if err := fs.Set(env[k], v); err != nil {
						t.Errorf("%s: %s=%q: %v", sname, k, v, err)
					}
				}
				if err := cfg.Validate(); err != nil {
					t.Errorf("%s: the binary refuses the settings: %v", sname, err)
				}
				if err := cfg.CheckServerKeys(); err != nil && sname != "migrate" {
					t.Errorf("%s: %v", sname, err)
				}
			}
		})
	}
}

func readDeployFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
