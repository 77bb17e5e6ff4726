package apierror

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// edgeRoots are the packages (with their subpackages) that answer HTTP requests: the ingest edge,
// the query edge (REST and MCP), the admin API and the server itself (internal/httpserver).
var edgeRoots = []string{"../../../ingest", "../../../query", "../../../adminapi", ".."}

// TestEveryCodeAnEdgeWritesIsInTheList scans the edges' source for every error code they can
// write: a constant of this package (apierror.X), a conversion apierror.Code("…"), and the text
// codes of tables not (yet) built on this package: the value of an "error" key or a Code field of a
// composite literal, and a literal assigned to a variable named code. Each must be in the list.
// An "error" key whose value the scan cannot read is reported too, so no answer escapes it.
func TestEveryCodeAnEdgeWritesIsInTheList(t *testing.T) {
	consts := codeConstants(t)
	found := map[string]int{}
	for _, root := range edgeRoots {
		for _, file := range goFiles(t, root) {
			for _, u := range scanFile(t, file) {
				switch {
				case u.constant != "":
					if _, ok := consts[u.constant]; !ok {
						t.Errorf("%s: apierror.%s is not a code of the list", u.pos, u.constant)
					}
					found[consts[u.constant]]++
				case u.unreadable:
					t.Errorf("%s: an \"error\" member whose code the scan cannot read: write it with apierror", u.pos)
				default:
					if _, ok := Lookup(u.literal); !ok {
						t.Errorf("%s: code %q is not in the closed list (internal/httpserver/apierror)", u.pos, u.literal)
					}
					found[u.literal]++
				}
			}
		}
	}
	t.Logf("codes written, with their number of places: %v", found)
	// The scan reads what it claims to: each edge's table is found, and so are the codes written
	// only by the server itself.
	for _, code := range []Code{InvalidParameter, Unauthorized, TrackingSourceUnavailable, AmbiguousCustomer, NotConfigured,
		MethodNotAllowed, RequestTimeout} {
		if found[string(code)] == 0 {
			t.Errorf("the scan found no use of %s: it no longer reads the edges", code)
		}
	}
	var unused []string
	for _, e := range Catalog() {
		if found[string(e.Code)] == 0 {
			unused = append(unused, string(e.Code))
		}
	}
	if len(unused) > 0 {
		t.Errorf("codes of the list no edge writes (remove them, or the scan missed an edge): %s", strings.Join(unused, ", "))
	}
}

// TestScanReadsEveryForm: the scanner recognizes each form a code is written in, so that the test
// above cannot pass by reading nothing.
func TestScanReadsEveryForm(t *testing.T) {
	src := `package p
func f() {
	_ = apierror.New(apierror.NotFound, "x")
	_ = apierror.Code("made_up")
	_ = gin.H{"error": "literal_code", "message": "m"}
	_ = restError{Code: "field_code"}
	_ = RejectedEvent{Error: "event_code"}
	status, code := 503, "assigned_code"
	code = "reassigned_code"
	_ = gin.H{"error": code}
	_ = gin.H{"error": ae.Code}
	_ = gin.H{"error": compute()}
	_ = status
}`
	dir := t.TempDir()
	file := filepath.Join(dir, "p.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range scanFile(t, file) {
		switch {
		case u.constant != "":
			got = append(got, "const:"+u.constant)
		case u.unreadable:
			got = append(got, "unreadable")
		default:
			got = append(got, u.literal)
		}
	}
	sort.Strings(got)
	want := []string{"assigned_code", "const:NotFound", "event_code", "field_code", "literal_code", "made_up", "reassigned_code", "unreadable"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("scan found %v, want %v", got, want)
	}
}

// use is one place where source writes an error code.
type use struct {
	pos        token.Position
	constant   string // apierror.<constant>
	literal    string // a code written as text
	unreadable bool   // an "error" member of another form
}

func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", "apierror":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files under %s", root)
	}
	return files
}

func scanFile(t *testing.T, path string) []use {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []use
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	add := func(n ast.Node, u use) {
		u.pos = fset.Position(n.Pos())
		out = append(out, u)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "apierror" && n.Sel.IsExported() && !isAPIErrorFunc(n.Sel.Name) {
				add(n, use{constant: n.Sel.Name})
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" && len(n.Args) == 1 {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "apierror" {
					if s, ok := lit(n.Args[0]); ok {
						add(n, use{literal: s})
					}
				}
			}
		case *ast.KeyValueExpr:
			if key, ok := lit(n.Key); ok && key == "error" {
				if s, ok := lit(n.Value); ok {
					add(n, use{literal: s})
				} else if !readableCode(n.Value) {
					add(n, use{unreadable: true})
				}
			}
			if key, ok := n.Key.(*ast.Ident); ok && (key.Name == "Code" || key.Name == "Error") {
				if s, ok := lit(n.Value); ok && codeRe.MatchString(s) {
					add(n, use{literal: s})
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				break
			}
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == "code" {
					if s, ok := lit(n.Rhs[i]); ok {
						add(n, use{literal: s})
					}
				}
			}
		}
		return true
	})
	return out
}

// isAPIErrorFunc names the exported identifiers of this package that are not codes.
func isAPIErrorFunc(name string) bool {
	switch name {
	case "New", "Newf", "Write", "WriteHTTP", "Error", "Code", "Entry", "Catalog", "Lookup", "OneLine":
		return true
	}
	return false
}

// readableCode: an "error" member's value whose code the scan reads elsewhere: a variable named
// code (its assignments are scanned), a .Code field, or a constant of this package.
func readableCode(e ast.Expr) bool {
	switch v := e.(type) {
	case *ast.Ident:
		return v.Name == "code"
	case *ast.SelectorExpr:
		if x, ok := v.X.(*ast.Ident); ok && x.Name == "apierror" {
			return true
		}
		return v.Sel.Name == "Code"
	}
	return false
}
