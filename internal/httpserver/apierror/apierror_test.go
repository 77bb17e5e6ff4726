package apierror

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

var codeRe = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// TestCatalogIsClosedAndWellFormed: one entry per constant of this package, each code snake_case,
// each with an error status, a meaning and an action, ordered by status.
func TestCatalogIsClosedAndWellFormed(t *testing.T) {
	consts := codeConstants(t)
	seen := map[Code]bool{}
	prev := 0
	for _, e := range Catalog() {
		if seen[e.Code] {
			t.Errorf("%s is listed twice", e.Code)
		}
		seen[e.Code] = true
		if !codeRe.MatchString(string(e.Code)) {
			t.Errorf("%q is not snake_case", e.Code)
		}
		if e.Status < 400 || e.Status > 599 || http.StatusText(e.Status) == "" {
			t.Errorf("%s: status %d is not an error status", e.Code, e.Status)
		}
		if e.Status < prev {
			t.Errorf("%s: the list is ordered by status, %d comes after %d", e.Code, e.Status, prev)
		}
		prev = e.Status
		if e.Meaning == "" || e.Action == "" || strings.ContainsAny(e.Meaning+e.Action, "\n|") {
			t.Errorf("%s: needs a meaning and an action, one line each, without | (they are a Markdown table's cells)", e.Code)
		}
		if e.Code.Status() != e.Status {
			t.Errorf("%s: Status() = %d, want %d", e.Code, e.Code.Status(), e.Status)
		}
	}
	for name, value := range consts {
		if !seen[Code(value)] {
			t.Errorf("constant %s (%q) is not in the catalog", name, value)
		}
	}
	if len(consts) != len(seen) {
		t.Errorf("%d constants, %d catalog entries", len(consts), len(seen))
	}
	if Code("no_such_code").Status() != http.StatusInternalServerError {
		t.Error("a code outside the list must not pass for a refusal")
	}
}

// codeConstants are the Code constants declared in this package's source, by name.
func codeConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "apierror.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, name := range vs.Names {
				lit := vs.Values[i].(*ast.BasicLit)
				v, _ := strconv.Unquote(lit.Value)
				out[name.Name] = v
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Code constants found")
	}
	return out
}

// TestMessagesAreOneLine: whatever error a message is made from, the body holds one line.
func TestMessagesAreOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                                "plain",
		"invalid request\nlimit must be 1-500": "invalid request; limit must be 1-500",
		"a\r\n\n  b  \n":                       "a; b",
		"Key: 'x.Name' Error:Field validation for 'Name' failed on the 'required' tag\nKey: 'x.Scope' Error:…": "Key: 'x.Name' Error:Field validation for 'Name' failed on the 'required' tag; Key: 'x.Scope' Error:…",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
		if got := New(InvalidParameter, in).Body()["message"]; got != want {
			t.Errorf("Body of %q: message %q", in, got)
		}
	}
}

// TestWrite: the body, the status of the code, no caching, the extra fields; both writers agree.
func TestWrite(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := &Error{Code: AmbiguousCustomer, Message: "two\nlines", Fields: map[string]any{"customerIds": []string{"a", "b"}}}
	want := `{"customerIds":["a","b"],"error":"ambiguous_customer","message":"two; lines"}`

	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	Write(c, e)
	if w.Code != http.StatusConflict || w.Header().Get("Cache-Control") != "no-store" || !c.IsAborted() || w.Body.String() != want {
		t.Errorf("Write: %d %v %q", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	WriteHTTP(w, e)
	if w.Code != http.StatusConflict || w.Header().Get("Cache-Control") != "no-store" || w.Body.String() != want ||
		w.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("WriteHTTP: %d %v %q", w.Code, w.Header(), w.Body)
	}
	var body map[string]any
	if json.Unmarshal(w.Body.Bytes(), &body) != nil {
		t.Fatal("not JSON")
	}
}
