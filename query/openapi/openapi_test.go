package openapi

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("not a valid OpenAPI 3 description: %v", err)
	}
	return doc
}

// TestServedJSONIsTheDescription: the served JSON parses back to the same paths.
func TestServedJSONIsTheDescription(t *testing.T) {
	doc := load(t)
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("served JSON does not load: %v", err)
	}
	if back.Paths.Len() != doc.Paths.Len() || back.OpenAPI != "3.0.3" {
		t.Fatalf("served JSON: %d paths (want %d), openapi %s", back.Paths.Len(), doc.Paths.Len(), back.OpenAPI)
	}
	if !json.Valid(b) {
		t.Fatal("served description is not JSON")
	}
}

// TestOperationsFollowTheConventions: every operation is named and tagged, every error answer is the
// {error, message} object (the 409 adds the matching customer IDs), and every authenticated
// operation documents 401 and 403.
func TestOperationsFollowTheConventions(t *testing.T) {
	doc := load(t)
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" || len(op.Tags) == 0 {
				t.Errorf("%s: needs an operationId and a tag", where)
			}
			if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %s is also %s", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			for status, ref := range op.Responses.Map() {
				if status[0] != '4' && status[0] != '5' {
					continue
				}
				mt := ref.Value.Content.Get("application/json")
				if mt == nil || mt.Schema == nil {
					t.Errorf("%s %s: an error answer needs an application/json body", where, status)
					continue
				}
				s := mt.Schema.Value
				for _, f := range []string{"error", "message"} {
					if !contains(s.Required, f) || s.Properties[f] == nil || !s.Properties[f].Value.Type.Is("string") {
						t.Errorf("%s %s: the error body must require string %q", where, status, f)
					}
				}
			}
			public := op.Security != nil && len(*op.Security) == 0
			if !public && method != http.MethodOptions {
				for _, status := range []int{401, 403} {
					if op.Responses.Status(status) == nil {
						t.Errorf("%s: an authenticated operation documents %d", where, status)
					}
				}
			}
		}
	}
}

// TestMoneyIsIntegerAndRatesAreNumbers walks every schema: a property ending in Cents is an integer
// (or a map of integers); rates and shares are numbers.
func TestMoneyIsIntegerAndRatesAreNumbers(t *testing.T) {
	doc := load(t)
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, s *openapi3.Schema)
	walk = func(where string, s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := s.Properties[name].Value
			switch {
			case strings.HasSuffix(name, "Cents"):
				if !isInteger(p) && !(p.AdditionalProperties.Schema != nil && isInteger(p.AdditionalProperties.Schema.Value)) &&
					!isIntegerMap(p) {
					t.Errorf("%s.%s: money must be an integer", where, name)
				}
			case strings.HasSuffix(name, "Rate") || strings.HasSuffix(name, "Share"):
				if !p.Type.Is("number") {
					t.Errorf("%s.%s: a rate or share must be a number", where, name)
				}
			}
			walk(where+"."+name, p)
		}
		for _, sub := range append(append(s.AllOf, s.OneOf...), s.AnyOf...) {
			walk(where, sub.Value)
		}
		if s.Items != nil {
			walk(where+"[]", s.Items.Value)
		}
		if s.AdditionalProperties.Schema != nil {
			walk(where+"{}", s.AdditionalProperties.Schema.Value)
		}
	}
	for name, ref := range doc.Components.Schemas {
		walk(name, ref.Value)
	}
}

func isInteger(s *openapi3.Schema) bool { return s.Type.Is("integer") }

// isIntegerMap: a map of integers written as allOf of one (ByCurrencyCents).
func isIntegerMap(s *openapi3.Schema) bool {
	for _, sub := range s.AllOf {
		if ap := sub.Value.AdditionalProperties.Schema; ap != nil && isInteger(ap.Value) {
			return true
		}
	}
	return false
}

// TestAlwaysNull: `complete` of received usage events is null and nothing else.
func TestAlwaysNull(t *testing.T) {
	s := load(t).Components.Schemas["AlwaysNull"].Value
	if err := s.VisitJSON(nil); err != nil {
		t.Errorf("null refused: %v", err)
	}
	for _, v := range []any{true, false} {
		if err := s.VisitJSON(v); err == nil {
			t.Errorf("%v accepted", v)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
