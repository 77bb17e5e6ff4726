package partnerfake

import "testing"

func TestLexerAndParser(t *testing.T) {
	doc, err := parseDocument(`# comment
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
	op := doc.ops[0]
	if op.name != "Q" || len(op.vars) != 2 || op.vars[0].typ.String() != "[Int!]!" || op.vars[1].def.s != "x\"é" {
		t.Fatalf("op %+v", op)
	}
	f := op.sels[0].(*fieldSel)
	if f.alias != "alias" || f.name != "field" || len(f.sels) != 3 {
		t.Fatalf("field %+v", f)
	}
	if got := f.args[1].val.s; got != "block \"quoted\"\n  indented" {
		t.Fatalf("block string %q", got)
	}
	if got := f.args[0].val.String(); got != "{k: [ENUM, 1.5e3, null, true]}" {
		t.Fatalf("object value %s", got)
	}
	if doc.frags["F"].typeCond != "T" {
		t.Fatal("fragment")
	}
	for src, msg := range map[string]string{
		"{ a(b: ) }":     `Parse error on ")" (PUNCT) at [1, 8]`,
		"{ a }\n  ? ":    `Parse error on "?" (UNKNOWN_CHAR) at [2, 3]`,
		`{ a(b: "x) }`:   "Parse error on bad string (unterminated string) at [1, 8]",
		"{ }":            `Parse error on "}" (PUNCT) at [1, 3]`,
		"fragment F T {": `Parse error on "T" (IDENTIFIER) at [1, 12]`,
	} {
		if _, err := parseDocument(src); err == nil || err.Message != msg {
			t.Errorf("%q: %v, want %s", src, err, msg)
		}
	}
}

func TestSchemaParses(t *testing.T) {
	for _, s := range []*schema{stableSchema, unstableSchema} {
		tx := s.types["Transaction"]
		if !tx.possible["AppSubscriptionSale"] || !tx.possible["TaxTransaction"] || tx.possible["Shop"] {
			t.Fatal("Transaction implementations")
		}
		if !s.types["AppSubscriptionEvent"].possible["SubscriptionChargeFrozen"] {
			t.Fatal("AppSubscriptionEvent implementations")
		}
		for _, et := range eventTypenames {
			if !s.types["AppEvent"].possible[et] {
				t.Fatalf("%s does not implement AppEvent", et)
			}
		}
		for _, v := range eventTypes {
			if !s.types["AppEventTypes"].enum[v] {
				t.Fatalf("enum lacks %s", v)
			}
		}
	}
	if stableSchema.types["AppUsageSale"].fields["processingFee"] != nil || unstableSchema.types["AppUsageSale"].fields["processingFee"] == nil {
		t.Fatal("processingFee must exist only in unstable")
	}
}
