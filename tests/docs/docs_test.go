// Package docs runs the shell examples of README.md and docs/*.md against the test stack and a
// running revtrack, so that a document that drifts from the product fails CI (docs/TESTING.md,
// "Shell examples in the docs").
package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockTimeout bounds one run of a block (a sync of the demo data is the longest, well under it).
const blockTimeout = 3 * time.Minute

// TestDocs runs every document's shell blocks in order, each document in its own shell session: a
// block starts with the variables and working directory the previous one left, as in a terminal.
// The document's prelude (preludes_test.go) first sets up what its text says a reader has. The
// first failing block fails the document with its line and output; the other documents still run.
func TestDocs(t *testing.T) {
	root := repoRoot(t)
	type doc struct {
		name   string
		blocks []block
	}
	var docs []doc
	for _, name := range documents(t, root) {
		blocks, err := parseBlocks(root, name)
		if err != nil {
			t.Fatalf("%v (TestEveryBlockRunsOrSaysWhyNot explains)", err)
		}
		var run []block
		for _, b := range blocks {
			if b.NoRun == "" {
				run = append(run, b)
			}
		}
		if len(run) > 0 {
			docs = append(docs, doc{name, run})
		}
	}
	in := startInstance(t)
	for _, d := range docs {
		t.Run(strings.ReplaceAll(d.name, "/", "_"), func(t *testing.T) {
			prelude, ok := preludes[d.name]
			if !ok {
				t.Fatalf("%s has shell blocks that run but no prelude in preludes_test.go", d.name)
			}
			sess := newSession(t, in)
			if out, err := sess.run(block{Doc: d.name, Code: prelude}, false); err != nil {
				t.Fatalf("the prelude of %s (tests/docs/preludes_test.go) failed: %v\n%s", d.name, err, out)
			}
			for _, b := range d.blocks {
				start := time.Now()
				out, err := sess.run(b, b.Retry)
				if err != nil {
					t.Fatalf("%s (```%s block): %v\n--- output ---\n%s", b, b.Lang, err, out)
				}
				if testing.Verbose() {
					t.Logf("%s: ran in %s\n%s", b, time.Since(start).Round(10*time.Millisecond), out)
				}
			}
		})
	}
}

// session is one document's shell: its state (exported variables and working directory) is kept
// in a file between blocks, because each block runs in a bash process of its own.
type session struct {
	in    instance
	dir   string
	state string
}

func newSession(t *testing.T, in instance) *session {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.sh")
	if err := os.WriteFile(state, []byte(fmt.Sprintf("cd %q\n", in.root)), 0o600); err != nil {
		t.Fatal(err)
	}
	return &session{in: in, dir: dir, state: state}
}

// wrapper runs a block under `set -euo pipefail` after restoring the session's state, then saves
// every variable the shell has with its attributes (`declare -p`: an exported one stays exported,
// one the block only assigned stays unexported, as in a reader's terminal) except bash's own and
// read-only ones, and the shell functions the blocks defined. The ERR trap names the failing line of the document.
const wrapper = `source %[1]q
set -euo pipefail
trap 'echo "docs test: %[2]s line $((%[3]d + LINENO)): exit $? from: $BASH_COMMAND" >&2' ERR
source %[4]q
trap - ERR
set +euo pipefail
{
	for __v in $(compgen -v); do
		case $__v in
		BASH* | COMP_* | FUNCNAME | GROUPS | PIPESTATUS | LINENO | RANDOM | SRANDOM | SECONDS | EPOCH* | HISTCMD | DIRSTACK | \
			_ | PPID | UID | EUID | SHELLOPTS | OPTIND | OPTARG | OPTERR | SHLVL | PWD | OLDPWD | __v | __d | __a) continue ;;
		esac
		__d=$(declare -p "$__v" 2>/dev/null) || continue
		__a=${__d#declare -}
		[[ ${__a%%%% *} == *r* ]] && continue
		printf '%%s\n' "$__d"
	done
	declare -f
	printf 'cd %%q\n' "$PWD"
} > %[5]q
`

// run runs b once, or, when retry is set, until it succeeds or retryFor has passed.
func (s *session) run(b block, retry bool) (string, error) {
	code := filepath.Join(s.dir, fmt.Sprintf("%s-%d.sh", strings.ReplaceAll(b.Doc, "/", "_"), b.Line))
	if err := os.WriteFile(code, []byte(b.Code), 0o600); err != nil {
		return "", err
	}
	next := s.state + ".next"
	script := fmt.Sprintf(wrapper, s.state, b.Doc, b.Line, code, next)
	deadline := time.Now().Add(retryFor)
	for attempt := 1; ; attempt++ {
		out, err := s.bash(script)
		if err == nil {
			return out, os.Rename(next, s.state)
		}
		if !retry || time.Now().After(deadline) {
			if retry {
				err = fmt.Errorf("%w (still failing after %d attempts in %s)", err, attempt, retryFor)
			}
			return out, err
		}
		time.Sleep(time.Second)
	}
}

func (s *session) bash(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir = s.in.root
	cmd.Env = s.in.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so that a timeout ends whatever the block started, not only bash.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("did not finish within %s", blockTimeout)
	}
	return tail(out.String(), 8000), err
}

// tail keeps the end of a long output, where the failure is.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
