package layout_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is the module's path and directory, from the go command itself.
type module struct{ Path, Dir string }

func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func mainModule(t *testing.T) module {
	t.Helper()
	var m module
	if err := json.Unmarshal(goCmd(t, ".", "list", "-m", "-json"), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pkg is what `go list` says of one package: its import path and its imports.
type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

func packages(t *testing.T, m module) []pkg {
	t.Helper()
	// -e: a package that does not compile still lists its imports; the build itself is other tests' job.
	out := goCmd(t, m.Dir, "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	return pkgs
}

// under reports whether the import path is the module's folder dir or inside it.
func under(m module, path, dir string) bool {
	p := m.Path + "/" + dir
	return path == p || strings.HasPrefix(path, p+"/")
}

// TestInternalIsPlumbing: internal/ keeps the plumbing every component uses (Kafka, ClickHouse and
// Redis clients, HTTP server, health, test env), so nothing in it, tests included, imports a
// component: the imports follow the data flow instead of running back up against it.
func TestInternalIsPlumbing(t *testing.T) {
	m := mainModule(t)
	components := []string{"ingest", "processors", "query", "uploader"}
	for _, p := range packages(t, m) {
		if !under(m, p.ImportPath, "internal") {
			continue
		}
		for kind, imports := range map[string][]string{"imports": p.Imports, "test imports": p.TestImports, "external test imports": p.XTestImports} {
			for _, imp := range imports {
				for _, c := range components {
					if under(m, imp, c) {
						t.Errorf("%s %s %s: internal/ must not depend on a component", p.ImportPath, kind, imp)
					}
				}
			}
		}
	}
}

// TestDevToolsStayOutOfTheProduct: the fakes and the demo (devtools/) are used by revtrack-dev,
// the benchmarks, the suites under tests/ and tests; no other package's code imports them.
func TestDevToolsStayOutOfTheProduct(t *testing.T) {
	m := mainModule(t)
	for _, p := range packages(t, m) {
		if under(m, p.ImportPath, "devtools") || under(m, p.ImportPath, "cmd/revtrack-dev") || under(m, p.ImportPath, "bench") ||
			under(m, p.ImportPath, "tests") {
			continue
		}
		for _, imp := range p.Imports {
			if under(m, imp, "devtools") {
				t.Errorf("%s imports %s: development tools belong in revtrack-dev (cmd/revtrack-dev), or in a _test.go file", p.ImportPath, imp)
			}
		}
	}
}

// TestReadersDoNotImportWriters: the query edge (REST, MCP, sync-run history) only reads, so its code
// imports no writer (ingest, the platform sync, processors, uploader) and not the admin edge; sync runs
// are read through query/syncruns. Tests may import writers to produce the data they read.
func TestReadersDoNotImportWriters(t *testing.T) {
	m := mainModule(t)
	writers := []string{"ingest", "processors", "uploader", "adminapi"}
	for _, p := range packages(t, m) {
		if !under(m, p.ImportPath, "query") {
			continue
		}
		for _, imp := range p.Imports {
			for _, w := range writers {
				if under(m, imp, w) {
					t.Errorf("%s imports %s: the query edge reads ClickHouse and the control plane, never through a writer", p.ImportPath, imp)
				}
			}
		}
	}
}

// TestProductionBinaryHasNoDevTools builds cmd/revtrack as `make build` does and reads its symbol
// table: no symbol of devtools/ (the partner and Google fakes, the demo page) may be in it, however
// it got there.
func TestProductionBinaryHasNoDevTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the production binary")
	}
	m := mainModule(t)
	bin := filepath.Join(t.TempDir(), "revtrack")
	goCmd(t, m.Dir, "build", "-o", bin, "./cmd/revtrack")
	var found []string
	for sc := bufio.NewScanner(bytes.NewReader(goCmd(t, m.Dir, "tool", "nm", bin))); sc.Scan(); {
		if strings.Contains(sc.Text(), "devtools/") {
			found = append(found, sc.Text())
		}
	}
	if len(found) > 0 {
		t.Errorf("bin/revtrack holds %d symbols of devtools/, e.g.\n%s", len(found), strings.Join(found[:min(len(found), 10)], "\n"))
	}
}
