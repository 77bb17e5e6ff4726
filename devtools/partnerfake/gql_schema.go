package partnerfake

import (
	_ "embed"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// The schema the fake serves is SDL (partner.graphql, plus partner_unstable.graphql on the
// unstable version), loaded by gqlparser, which adds the built-in scalars and directives.

//go:embed partner.graphql
var schemaSDL string

//go:embed partner_unstable.graphql
var unstableSDL string

var (
	stableSchema   = mustSchema(&ast.Source{Name: "partner.graphql", Input: schemaSDL})
	unstableSchema = mustSchema(&ast.Source{Name: "partner.graphql", Input: schemaSDL},
		&ast.Source{Name: "partner_unstable.graphql", Input: unstableSDL})
)

func mustSchema(sources ...*ast.Source) *ast.Schema {
	s, err := gqlparser.LoadSchema(sources...)
	if err != nil {
		panic("partnerfake: " + err.Error())
	}
	return s
}

// namedType looks a type up by name, hiding the introspection types (__Schema, __Type, ...) the
// library adds: the fake does not serve introspection (README.md, "Not implemented").
func namedType(sch *ast.Schema, name string) *ast.Definition {
	if len(name) > 1 && name[:2] == "__" {
		return nil
	}
	return sch.Types[name]
}
