package partnerfake

import (
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

func TestParseErrorsAreWordedAsGraphQLRuby(t *testing.T) {
	doc, err := parseQuery(`# comment
query Q($a: [Int!]! = [1, 2], $s: String = "x\"\u00e9") @include(if: true) {
  alias: field(arg: {k: [ENUM, 1.5e3, null, true]}, s: """
    block "quoted"
      indented
  """) { ...F ... on T { x } ... @skip(if: false) { y } }
}
fragment F on T { z }`)
	if err != nil {
		t.Fatal(err.Message)
	}
	f := doc.Operations[0].SelectionSet[0].(*ast.Field)
	if got := f.Arguments[1].Value.Raw; got != "block \"quoted\"\n  indented" {
		t.Fatalf("block string %q", got)
	}
	if got := literal(f.Arguments[0].Value); got != "{k: [ENUM, 1.5e3, null, true]}" {
		t.Fatalf("object value %s", got)
	}
	if got := literal(doc.Operations[0].VariableDefinitions[1].DefaultValue); got != `"x\"é"` {
		t.Fatalf("string value %s", got)
	}
	for src, msg := range map[string]string{
		"{ a(b: ) }":                      `Parse error on ")" (PUNCT) at [1, 8]`,
		"{ a }\n  ? ":                     `Parse error on "?" (UNKNOWN_CHAR) at [2, 3]`,
		"{ a }\r\n# c\n\t?":               `Parse error on "?" (UNKNOWN_CHAR) at [3, 2]`,
		`{ a(b: "x) }`:                    "Parse error on bad string (unterminated string) at [1, 8]",
		`{ a(b: "\q") }`:                  "Parse error on bad string (bad escape) at [1, 8]",
		`{ a(b: "\u12") }`:                "Parse error on bad string (bad unicode escape) at [1, 8]",
		"{ a(b: \"\"\"x\n y) }":           "Parse error on bad string (unterminated block string) at [1, 8]",
		"{ a(b: -x) }":                    `Parse error on "-" at [1, 8]`,
		"{ a . b }":                       `Parse error on "." at [1, 5]`,
		"{ }":                             `Parse error on "}" (PUNCT) at [1, 3]`,
		"{ a(b: 1 c: 2.5 d: 1 e: \"s\" }": `Parse error on "}" (PUNCT) at [1, 29]`,
		"{ a(b: 1) \"s\" }":               `Parse error on "s" (STRING) at [1, 11]`,
		"{ a(b: 1) 2 }":                   `Parse error on "2" (INT) at [1, 11]`,
		"fragment F T {":                  `Parse error on "T" (IDENTIFIER) at [1, 12]`,
		"{ a { b }":                       "Unexpected end of document",
	} {
		if _, err := parseQuery(src); err == nil || err.Message != msg {
			t.Errorf("%q: %v, want %s", src, err, msg)
		}
	}
}

func TestSchemaLoads(t *testing.T) {
	names := func(s *ast.Schema, iface string) []string {
		var out []string
		for _, d := range s.PossibleTypes[iface] {
			out = append(out, d.Name)
		}
		return out
	}
	for _, s := range []*ast.Schema{stableSchema, unstableSchema} {
		if s.Query.Name != "QueryRoot" {
			t.Fatal("query root")
		}
		tx := names(s, "Transaction")
		if !slices.Contains(tx, "AppSubscriptionSale") || !slices.Contains(tx, "TaxTransaction") || slices.Contains(tx, "Shop") {
			t.Fatal("Transaction implementations")
		}
		if !slices.Contains(names(s, "AppSubscriptionEvent"), "SubscriptionChargeFrozen") {
			t.Fatal("AppSubscriptionEvent implementations")
		}
		for _, et := range eventTypenames {
			if !slices.Contains(names(s, "AppEvent"), et) {
				t.Fatalf("%s does not implement AppEvent", et)
			}
		}
		for _, v := range eventTypes {
			if s.Types["AppEventTypes"].EnumValues.ForName(v) == nil {
				t.Fatalf("enum lacks %s", v)
			}
		}
	}
	if stableSchema.Types["AppUsageSale"].Fields.ForName("processingFee") != nil || unstableSchema.Types["AppUsageSale"].Fields.ForName("processingFee") == nil {
		t.Fatal("processingFee must exist only in unstable")
	}
}

// TestValidationErrorShape pins a whole error entry, and the library rules' graphql-ruby codes.
func TestValidationErrorShape(t *testing.T) {
	s := newTestServer(nil)
	r := post(t, s, "2025-01", "query Q {\n  transactions { edges { node { ... on AppSaleCredit { shop { nope } } } } }\n}", nil)
	want := `{"errors":[{"message":"Field 'nope' doesn't exist on type 'Shop'","locations":[{"line":2,"column":63}],` +
		`"path":["query Q","transactions","edges","node","... on AppSaleCredit","shop","nope"],` +
		`"extensions":{"code":"undefinedField","typeName":"Shop","fieldName":"nope"}}]}`
	if string(r.raw) != want {
		t.Errorf("got  %s\nwant %s", r.raw, want)
	}
	cases := []struct{ query, op, code string }{
		{"query A { publicApiVersions { handle } } query A { publicApiVersions { handle } }", "A", "uniquelyNamedOperations"},
		{"query A { publicApiVersions { handle } } { publicApiVersions { handle } }", "A", "uniquelyNamedOperations"},
		{"{ publicApiVersions { handle @skip(if: true) @skip(if: false) } }", "", "directiveNotUniqueForLocation"},
		{"{ transactions { edges { node { ...A } } } } fragment A on Transaction { ...B } fragment B on Transaction { ...A }", "", "infiniteLoop"},
		{"{ transactions { edges { node { ...A } } } } fragment A on Transaction { id } fragment A on Transaction { id }", "", "fragmentNotUnique"},
	}
	for _, c := range cases {
		r := postAs(t, s, s.Path("2025-01"), testToken, map[string]any{"query": c.query, "operationName": c.op})
		if r.status != 200 || r.Data != nil || len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != c.code || strings.TrimSpace(r.Errors[0].Message) == "" {
			t.Errorf("%s\n got %s", c.query, r.raw)
		}
	}
}
