package layout_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines bounds a non-test Go file (issue 13): past it, a file holds more than one idea.
const maxLines = 500

// TestNoLongSourceFiles: no non-test Go file in the repository is over maxLines lines.
func TestNoLongSourceFiles(t *testing.T) {
	m := mainModule(t)
	checked := 0
	err := filepath.WalkDir(m.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The go command skips dot folders too; bin/ is build output; node_modules are the
			// browser and MCP tests' Node packages.
			if path != m.Dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if n := bytes.Count(b, []byte("\n")); n > maxLines {
			rel, _ := filepath.Rel(m.Dir, path)
			t.Errorf("%s has %d lines, more than %d: split it", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go file found")
	}
}
