package openapi

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// TestErrorCodesAreTheClosedList: the enum of Error.error is the list of
// internal/httpserver/apierror, in its order.
func TestErrorCodesAreTheClosedList(t *testing.T) {
	doc := load(t)
	var want []string
	for _, e := range apierror.Catalog() {
		want = append(want, string(e.Code))
	}
	prop := doc.Components.Schemas["Error"].Value.Properties["error"].Value
	var got []string
	for _, v := range prop.Enum {
		got = append(got, fmt.Sprint(v))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Error.error enum:\n got  %v\n want %v (internal/httpserver/apierror)", got, want)
	}
}

// TestErrorResponsesNameTheirCodes: every error answer of every operation carries codes of the list
// with that answer's status: an error schema with its own enum lists them, the shared Error schema's
// answers name them in their description.
func TestErrorResponsesNameTheirCodes(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				n, err := strconv.Atoi(status)
				if err != nil || n < 400 {
					continue
				}
				where := fmt.Sprintf("%s %s %s", method, path, status)
				checkErrorResponse(t, where, n, ref.Value)
			}
		}
	}
}

var backticked = regexp.MustCompile("`([a-z]+(?:_[a-z]+)*)`")

func checkErrorResponse(t *testing.T, where string, status int, r *openapi3.Response) {
	t.Helper()
	generic := false
	for _, mt := range r.Content {
		if mt.Schema == nil || mt.Schema.Value == nil || mt.Schema.Value.Properties["error"] == nil {
			continue
		}
		enum := mt.Schema.Value.Properties["error"].Value.Enum
		if len(enum) == len(apierror.Catalog()) {
			generic = true
			continue
		}
		if len(enum) == 0 {
			t.Errorf("%s: its error property lists no codes", where)
		}
		for _, v := range enum {
			checkCode(t, where, status, fmt.Sprint(v))
		}
	}
	if !generic {
		return
	}
	named := 0
	for _, m := range backticked.FindAllStringSubmatch(deref(r.Description), -1) {
		if _, ok := apierror.Lookup(m[1]); ok {
			checkCode(t, where, status, m[1])
			named++
		}
	}
	if named == 0 {
		t.Errorf("%s: the description names none of the codes it carries (in backticks): %q", where, deref(r.Description))
	}
}

func checkCode(t *testing.T, where string, status int, code string) {
	t.Helper()
	e, ok := apierror.Lookup(code)
	switch {
	case !ok:
		t.Errorf("%s: %q is not a code of the list (internal/httpserver/apierror)", where, code)
	case e.Status != status:
		t.Errorf("%s: %s is answered with %d, not %d", where, code, e.Status, status)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// statusCode is a status and a code written together in prose, e.g. `409 conflict`.
var statusCode = regexp.MustCompile("`([1-5][0-9]{2})\\s+([a-z]+(?:_[a-z]+)+|[a-z]+)`")

// TestCodesInProseAreTheList: wherever the document or docs/API.md writes a status with a code
// (`409 conflict`), the code is one of the list and has that status, so a renamed code leaves no
// old name behind.
func TestCodesInProseAreTheList(t *testing.T) {
	api, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"openapi.yaml": string(YAML()), "docs/API.md": string(api)} {
		for _, m := range statusCode.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[1])
			if n < 400 {
				continue
			}
			checkCode(t, name+": `"+m[1]+" "+m[2]+"`", n, m[2])
		}
	}
}

// TestAPIDocListsTheCodes: docs/API.md "Errors" has one row per code of the list, in its order,
// with its status, meaning and action.
func TestAPIDocListsTheCodes(t *testing.T) {
	b, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Errors\n")
	if !ok {
		t.Fatal(`docs/API.md has no "## Errors" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	cat := apierror.Catalog()
	for i, e := range cat {
		want := fmt.Sprintf("| `%s` | %d %s | %s | %s |", e.Code, e.Status, http.StatusText(e.Status), e.Meaning, e.Action)
		if i >= len(rows) {
			t.Errorf("docs/API.md Errors: missing row %d:\n%s", i+1, want)
			continue
		}
		if rows[i] != want {
			t.Errorf("docs/API.md Errors, row %d:\n got  %s\n want %s", i+1, rows[i], want)
		}
	}
	if len(rows) > len(cat) {
		t.Errorf("docs/API.md Errors: %d rows for %d codes", len(rows), len(cat))
	}
}
