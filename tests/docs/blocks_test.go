package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// A shell example in the docs is a fenced block whose info string starts with sh or bash. What
// follows the language says how this test treats it (docs/TESTING.md, "Shell examples in the docs"):
//
//	```sh                   runs; a failing command fails the test
//	```sh retry             runs again (every second, up to retryFor) until it succeeds: the
//	                        pipeline is asynchronous, so what a block looks for appears within seconds
//	```sh no-run: <reason>  never runs; the reason is required
//
// Any other word after the language is refused, so a misspelt marker cannot skip a block.

// shellLanguages are the info-string languages of shell examples.
var shellLanguages = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true}

// retryFor bounds a retry block: the pipeline lands an event in about a second, a sync's records
// within a few seconds after the sync command returns.
const retryFor = 60 * time.Second

type block struct {
	Doc   string // path relative to the repository root
	Line  int    // line of the opening fence (1-based)
	Lang  string
	Code  string
	Retry bool
	NoRun string // the reason; empty when the block runs
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.Doc, b.Line) }

var fenceRe = regexp.MustCompile("^\\s*(```+|~~~+)\\s*(.*)$")

// parseBlocks returns the shell blocks of a Markdown file, or an error for a marker it does not know.
func parseBlocks(root, rel string) ([]block, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out   []block
		open  string // the opening fence while inside a block
		cur   *block
		lines []string
		n     int
		errs  []string
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		m := fenceRe.FindStringSubmatch(line)
		if open != "" {
			// A closing fence is the same character, at least as long, with nothing after it.
			if m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && m[2] == "" {
				if cur != nil {
					cur.Code = strings.Join(lines, "\n") + "\n"
					out = append(out, *cur)
				}
				open, cur, lines = "", nil, nil
				continue
			}
			lines = append(lines, line)
			continue
		}
		if m == nil {
			continue
		}
		open = m[1]
		lang, attrs, _ := strings.Cut(strings.TrimSpace(m[2]), " ")
		if !shellLanguages[lang] {
			continue
		}
		b := block{Doc: rel, Line: n, Lang: lang}
		attrs = strings.TrimSpace(attrs)
		switch {
		case attrs == "":
		case attrs == "retry":
			b.Retry = true
		case strings.HasPrefix(attrs, "no-run:"):
			b.NoRun = strings.TrimSpace(strings.TrimPrefix(attrs, "no-run:"))
			if b.NoRun == "" {
				errs = append(errs, fmt.Sprintf("%s:%d: no-run needs a reason: ```%s no-run: <why it cannot run here>", rel, n, lang))
			}
		default:
			errs = append(errs, fmt.Sprintf("%s:%d: unknown marker %q after ```%s (known: retry, no-run: <reason>)", rel, n, attrs, lang))
		}
		cur = &b
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != "" {
		errs = append(errs, fmt.Sprintf("%s: a fenced block is never closed", rel))
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// documents are the Markdown files whose examples run: README.md and docs/*.md.
func documents(t testing.TB, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		out = append(out, rel)
	}
	sort.Strings(out[1:])
	return out
}

// repoRoot is the repository root: this package is tests/docs.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestEveryBlockRunsOrSaysWhyNot: every shell block of the docs either runs or carries a no-run
// marker with its reason, no marker is misspelt, and every document with a block that runs has a
// prelude (preludes_test.go), so no example is skipped without saying so.
func TestEveryBlockRunsOrSaysWhyNot(t *testing.T) {
	root := repoRoot(t)
	var run, skipped int
	for _, doc := range documents(t, root) {
		blocks, err := parseBlocks(root, doc)
		if err != nil {
			t.Error(err)
		}
		for _, b := range blocks {
			if b.NoRun != "" {
				skipped++
				continue
			}
			run++
			if _, ok := preludes[doc]; !ok {
				t.Errorf("%s: a block runs, but %s has no prelude in tests/docs/preludes_test.go (the environment its text says to set up)", b, doc)
			}
		}
	}
	for doc := range preludes {
		if _, err := os.Stat(filepath.Join(root, doc)); err != nil {
			t.Errorf("prelude for %s, which does not exist", doc)
		}
	}
	if run == 0 {
		t.Fatal("no shell block runs: the extraction is broken")
	}
	t.Logf("%d shell blocks run, %d are marked no-run", run, skipped)
}

// TestParseBlocks pins the marker rules on a document made for it.
func TestParseBlocks(t *testing.T) {
	dir := t.TempDir()
	md := "# x\n```sh\necho one\n```\n```go\nignored\n```\n````bash retry\necho ```\n````\n" +
		"```sh no-run: needs a browser\nopen x\n```\n```sh no-run:\nx\n```\n```sh norun\nx\n```\n```\nplain\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(dir, "x.md")
	if err == nil || !strings.Contains(err.Error(), "x.md:14: no-run needs a reason") || !strings.Contains(err.Error(), `x.md:17: unknown marker "norun"`) {
		t.Fatalf("want both marker errors, got %v", err)
	}
	want := []block{
		{Doc: "x.md", Line: 2, Lang: "sh", Code: "echo one\n"},
		{Doc: "x.md", Line: 8, Lang: "bash", Code: "echo ```\n", Retry: true},
		{Doc: "x.md", Line: 11, Lang: "sh", Code: "open x\n", NoRun: "needs a browser"},
		{Doc: "x.md", Line: 14, Lang: "sh", Code: "x\n"},
		{Doc: "x.md", Line: 17, Lang: "sh", Code: "x\n"},
	}
	if fmt.Sprint(blocks) != fmt.Sprint(want) || len(blocks) != len(want) {
		t.Fatalf("blocks %v, want %v", blocks, want)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, blocks[i], want[i])
		}
	}
}
