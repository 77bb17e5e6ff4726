package partnerfake

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// Static validation runs on gqlparser's walker, which resolves every field, argument, value and
// fragment against the schema. The real API answers these errors as HTTP 200 with "errors" and
// no "data", in graphql-ruby's words and extensions (README.md, "Selection sets are honoured"),
// so the rules that clients meet are written here in those words; the library's own rules are
// kept for the rest, with graphql-ruby's code. Its rule that fields can be merged is left out,
// as documented.
var partnerRules = rules.NewRules(
	core.Rule{Name: "partnerFields", RuleFunc: fieldRules},
	core.Rule{Name: "partnerFragments", RuleFunc: fragmentRules},
	core.Rule{Name: "partnerDirectives", RuleFunc: directiveRules},
	core.Rule{Name: "partnerVariables", RuleFunc: variableRules},
	core.Rule{Name: "partnerFragmentCycles", RuleFunc: cycleRule},
	rules.UniqueOperationNamesRule,
	rules.LoneAnonymousOperationRule,
	rules.UniqueDirectivesPerLocationRule,
)

// libraryCodes are graphql-ruby's extensions.code for the library rules kept as they are.
var libraryCodes = map[string]string{
	rules.UniqueOperationNamesRule.Name:        "uniquelyNamedOperations",
	rules.LoneAnonymousOperationRule.Name:      "uniquelyNamedOperations",
	rules.UniqueDirectivesPerLocationRule.Name: "directiveNotUniqueForLocation",
}

// staticError is an error worded here; it rides in gqlerror.Error.Err through the validator.
type staticError struct {
	gqlError
	where
}

func (e *staticError) Error() string { return e.Message }

// where places an error: at is its location and host the node whose path it carries. late is 1
// for what graphql-ruby reports on leaving an operation and 2 on leaving the document, which come
// after the others. back moves the location to the token before at: gqlparser places fragments
// and directives at their name, graphql-ruby at the "..." or "@" before it.
type where struct {
	at, host *ast.Position
	late     int
	back     bool
}

func on(p *ast.Position) where { return where{at: p, host: p} }

func behind(p *ast.Position) where { return where{at: p, host: p, back: true} }

func report(add core.AddErrFunc, w where, msg string, ext ...kv) {
	add(func(e *gqlerror.Error) {
		e.Message = msg
		e.Err = &staticError{gqlError{Message: msg, Locations: []pos{posOf(w.at)}, Extensions: ext}, w}
	})
}

func validate(sch *ast.Schema, doc *ast.QueryDocument) []*gqlError {
	found := validator.ValidateWithRules(sch, doc, partnerRules)
	if len(found) == 0 {
		return nil
	}
	paths := responsePaths(doc)
	var before map[pos]pos
	seen := map[string]bool{}
	var errs []*staticError
	for _, e := range found {
		var se *staticError
		if !errors.As(e.Err, &se) {
			se = &staticError{gqlError: gqlError{Message: e.Message, Extensions: []kv{{"code", libraryCodes[e.Rule]}}}}
			for _, l := range e.Locations {
				se.Locations = append(se.Locations, pos{l.Line, l.Column})
			}
		}
		if se.back {
			if before == nil {
				before = tokenBefore(se.at.Src)
			}
			if p, ok := before[se.Locations[0]]; ok {
				se.Locations[0] = p
			}
		}
		// The walker visits a fragment once per operation spreading it and once on its own.
		if key := fmt.Sprint(se.Message, se.Locations); !seen[key] {
			seen[key] = true
			se.Path = paths[se.host]
			errs = append(errs, se)
		}
	}
	slices.SortStableFunc(errs, func(a, b *staticError) int {
		var pa, pb pos
		if len(a.Locations) > 0 && len(b.Locations) > 0 {
			pa, pb = a.Locations[0], b.Locations[0]
		}
		return cmp.Or(cmp.Compare(a.late, b.late), cmp.Compare(pa.line, pb.line), cmp.Compare(pa.col, pb.col))
	})
	out := make([]*gqlError, len(errs))
	for i, e := range errs {
		out[i] = &e.gqlError
	}
	return out
}

// tokenBefore maps each token's position to the position of the token before it.
func tokenBefore(src *ast.Source) map[pos]pos {
	m := map[pos]pos{}
	lx := lexer.New(src)
	var prev pos
	for {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return m
		}
		if tok.Kind != lexer.Comment {
			m[posOf(&tok.Pos)], prev = prev, posOf(&tok.Pos)
		}
	}
}

// responsePaths gives the path graphql-ruby reports for each node an error can point at: the
// operation ("query Q") or fragment ("fragment F") then response keys, "... on T" and "... F".
// A directive carries the path of what it is on.
func responsePaths(doc *ast.QueryDocument) map[*ast.Position][]any {
	m := map[*ast.Position][]any{}
	dirs := func(ds ast.DirectiveList, path []any) {
		for _, d := range ds {
			m[d.Position] = path
		}
	}
	var sels func(ss ast.SelectionSet, path []any)
	sels = func(ss ast.SelectionSet, path []any) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.Field:
				p := with(path, s.Alias)
				m[s.Position] = p
				dirs(s.Directives, p)
				sels(s.SelectionSet, p)
			case *ast.InlineFragment:
				label := "..."
				if s.TypeCondition != "" {
					label = "... on " + s.TypeCondition
				}
				m[s.Position] = with(path, label)
				dirs(s.Directives, path)
				sels(s.SelectionSet, with(path, label))
			case *ast.FragmentSpread:
				m[s.Position] = with(path, "... "+s.Name)
				dirs(s.Directives, path)
			}
		}
	}
	for _, op := range doc.Operations {
		p := []any{string(op.Operation)}
		if op.Name != "" {
			p[0] = string(op.Operation) + " " + op.Name
		}
		m[op.Position] = p
		dirs(op.Directives, p)
		for _, vd := range op.VariableDefinitions {
			dirs(vd.Directives, p)
		}
		sels(op.SelectionSet, p)
	}
	for _, f := range doc.Fragments {
		p := []any{"fragment " + f.Name}
		m[f.Position] = p
		dirs(f.Directives, p)
		sels(f.SelectionSet, p)
	}
	return m
}

func with(path []any, el any) []any { return append(append([]any(nil), path...), el) }

func opName(op *ast.OperationDefinition) string {
	if op.Name == "" {
		return "anonymous " + string(op.Operation)
	}
	return op.Name
}

func fieldRules(obs *core.Events, add core.AddErrFunc) {
	obs.OnField(func(w *core.Walker, f *ast.Field) {
		parent := f.ObjectDefinition
		if parent == nil || !parent.IsCompositeType() || namedType(w.Schema, parent.Name) == nil {
			return // inside something already reported: an unknown field, type or a leaf
		}
		at := f.Position
		if f.Name == "__typename" {
			if len(f.SelectionSet) > 0 {
				report(add, on(at), fmt.Sprintf("Selections can't be made on scalars (field '__typename' returns String but has selections [%s])", selNames(f.SelectionSet)),
					kv{"code", "selectionMismatch"}, kv{"nodeName", "field '__typename'"}, kv{"typeName", "String"})
			}
			return
		}
		fd := f.Definition
		if fd == nil || strings.HasPrefix(f.Name, "__") {
			report(add, on(at), fmt.Sprintf("Field '%s' doesn't exist on type '%s'", f.Name, parent.Name),
				kv{"code", "undefinedField"}, kv{"typeName", parent.Name}, kv{"fieldName", f.Name})
			return
		}
		arguments(w, add, f)
		named := w.Schema.Types[fd.Type.Name()]
		switch {
		case named.IsLeafType():
			if len(f.SelectionSet) > 0 {
				kind := "scalars"
				if named.Kind == ast.Enum {
					kind = "enums"
				}
				report(add, on(at), fmt.Sprintf("Selections can't be made on %s (field '%s' returns %s but has selections [%s])", kind, f.Name, named.Name, selNames(f.SelectionSet)),
					kv{"code", "selectionMismatch"}, kv{"nodeName", "field '" + f.Name + "'"}, kv{"typeName", named.Name})
			}
		case len(f.SelectionSet) == 0:
			report(add, on(at), fmt.Sprintf("Field must have selections (field '%s' returns %s but has no selections. Did you mean '%s { ... }'?)", f.Name, fd.Type, f.Name),
				kv{"code", "selectionMismatch"}, kv{"nodeName", "field '" + f.Name + "'"}, kv{"typeName", named.Name})
		}
	})
}

func selNames(sels ast.SelectionSet) string {
	var names []string
	for _, s := range sels {
		if f, ok := s.(*ast.Field); ok {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ", ")
}

func arguments(w *core.Walker, add core.AddErrFunc, f *ast.Field) {
	given := map[string]bool{}
	for _, a := range f.Arguments {
		if given[a.Name] {
			report(add, where{at: a.Position, host: f.Position}, fmt.Sprintf("There can be only one argument named %q", a.Name), kv{"code", "argumentNotUnique"}, kv{"name", a.Name})
			continue
		}
		given[a.Name] = true
		ad := f.Definition.Arguments.ForName(a.Name)
		if ad == nil {
			report(add, where{at: a.Position, host: f.Position}, fmt.Sprintf("Field '%s' doesn't accept argument '%s'", f.Name, a.Name),
				kv{"code", "argumentNotAccepted"}, kv{"name", f.Name}, kv{"typeName", "Field"}, kv{"argumentName", a.Name})
			continue
		}
		if !literalOK(w, add, a.Value, ad.Type, ad.DefaultValue != nil, a.Name, f.Position) {
			report(add, where{at: a.Position, host: f.Position}, fmt.Sprintf("Argument '%s' on Field '%s' has an invalid value (%s). Expected type '%s'.", a.Name, f.Name, literal(a.Value), ad.Type),
				kv{"code", "argumentLiteralsIncompatible"}, kv{"typeName", "Field"}, kv{"argumentName", a.Name})
		}
	}
	var missing []string
	for _, ad := range f.Definition.Arguments {
		if ad.Type.NonNull && ad.DefaultValue == nil && !given[ad.Name] {
			missing = append(missing, ad.Name)
		}
	}
	if len(missing) > 0 {
		list := strings.Join(missing, ", ")
		report(add, on(f.Position), fmt.Sprintf("Field '%s' is missing required arguments: %s", f.Name, list),
			kv{"code", "missingRequiredArguments"}, kv{"className", "Field"}, kv{"name", f.Name}, kv{"arguments", list})
	}
}

// literalOK checks a literal against an input type; variables are checked for declaration and
// type compatibility instead (and reported separately).
func literalOK(w *core.Walker, add core.AddErrFunc, val *ast.Value, t *ast.Type, locDefault bool, argName string, host *ast.Position) bool {
	if val.Kind == ast.Variable {
		op := w.CurrentOperation
		if op == nil {
			return true // a fragment walked on its own: each operation spreading it checks its variables
		}
		vd := op.VariableDefinitions.ForName(val.Raw)
		if vd == nil {
			report(add, where{at: val.Position, host: host}, fmt.Sprintf("Variable $%s is used by %s but not declared", val.Raw, opName(op)),
				kv{"code", "variableNotDefined"}, kv{"variableName", val.Raw})
			return true
		}
		if msg := varCompatible(vd.Type, t, locDefault || vd.DefaultValue != nil); msg != "" {
			report(add, where{at: val.Position, host: host}, fmt.Sprintf("%s on variable $%s and argument %s (%s / %s)", msg, val.Raw, argName, vd.Type, t),
				kv{"code", "variableMismatch"}, kv{"variableName", val.Raw}, kv{"typeName", vd.Type.String()},
				kv{"argumentName", argName}, kv{"errorMessage", msg})
		}
		return true
	}
	if val.Kind == ast.NullValue {
		return !t.NonNull
	}
	if t.Elem != nil {
		if val.Kind != ast.ListValue {
			return literalOK(w, add, val, t.Elem, false, argName, host)
		}
		for _, c := range val.Children {
			if !literalOK(w, add, c.Value, t.Elem, false, argName, host) {
				return false
			}
		}
		return true
	}
	_, ok := coerceLiteral(w.Schema, val, t, nil)
	return ok
}

// directiveRules: the executor honours @skip and @include, so they are the only directives.
func directiveRules(obs *core.Events, add core.AddErrFunc) {
	obs.OnDirective(func(w *core.Walker, d *ast.Directive) {
		at := d.Position
		if d.Name != "include" && d.Name != "skip" {
			report(add, behind(at), fmt.Sprintf("Directive @%s is not defined", d.Name), kv{"code", "undefinedDirective"}, kv{"directiveName", d.Name})
			return
		}
		found := false
		for _, a := range d.Arguments {
			if a.Name != "if" {
				report(add, where{at: a.Position, host: at}, fmt.Sprintf("Directive '@%s' doesn't accept argument '%s'", d.Name, a.Name),
					kv{"code", "argumentNotAccepted"}, kv{"name", d.Name}, kv{"typeName", "Directive"}, kv{"argumentName", a.Name})
				continue
			}
			found = true
			if !literalOK(w, add, a.Value, nonNullBoolean, false, "if", at) {
				report(add, where{at: a.Position, host: at}, fmt.Sprintf("Argument 'if' on Directive '%s' has an invalid value (%s). Expected type 'Boolean!'.", d.Name, literal(a.Value)),
					kv{"code", "argumentLiteralsIncompatible"}, kv{"typeName", "Directive"}, kv{"argumentName", "if"})
			}
		}
		if !found {
			report(add, behind(at), fmt.Sprintf("Directive '@%s' is missing required arguments: if", d.Name),
				kv{"code", "missingRequiredArguments"}, kv{"className", "Directive"}, kv{"name", d.Name}, kv{"arguments", "if"})
		}
	})
}

func fragmentRules(obs *core.Events, add core.AddErrFunc) {
	used, defined := map[string]bool{}, map[string]bool{}
	obs.OnInlineFragment(func(w *core.Walker, f *ast.InlineFragment) {
		if f.TypeCondition != "" {
			condition(w, add, f.TypeCondition, f.ObjectDefinition, "Fragment", f.Position)
		}
	})
	obs.OnFragmentSpread(func(w *core.Walker, s *ast.FragmentSpread) {
		if w.CurrentOperation != nil {
			used[s.Name] = true
		}
		if s.Definition == nil {
			report(add, behind(s.Position), fmt.Sprintf("Fragment %s was used, but not defined", s.Name),
				kv{"code", "useAndDefineFragment"}, kv{"fragmentName", s.Name})
			return
		}
		condition(w, add, s.Definition.TypeCondition, s.ObjectDefinition, "Fragment "+s.Name, s.Position)
	})
	// Fragment definitions are walked after every operation, so used is complete by then.
	obs.OnFragment(func(w *core.Walker, f *ast.FragmentDefinition) {
		if defined[f.Name] {
			report(add, on(f.Position), fmt.Sprintf("Fragment name %q must be unique", f.Name),
				kv{"code", "fragmentNotUnique"}, kv{"fragmentName", f.Name})
		}
		defined[f.Name] = true
		if !used[f.Name] {
			report(add, where{at: f.Position, host: f.Position, late: 2}, fmt.Sprintf("Fragment %s was defined, but not used", f.Name),
				kv{"code", "useAndDefineFragment"}, kv{"fragmentName", f.Name})
		}
	})
}

// condition checks a fragment's type condition and that it can apply inside parent.
func condition(w *core.Walker, add core.AddErrFunc, name string, parent *ast.Definition, what string, at *ast.Position) {
	if parent == nil || !parent.IsCompositeType() {
		return
	}
	t := namedType(w.Schema, name)
	switch {
	case t == nil:
		report(add, behind(at), fmt.Sprintf("No such type %s, so it can't be a fragment condition", name),
			kv{"code", "undefinedType"}, kv{"typeName", name})
	case !t.IsCompositeType():
		report(add, behind(at), fmt.Sprintf("Invalid fragment on type %s (must be Union, Interface or Object)", name),
			kv{"code", "fragmentOnNonCompositeType"}, kv{"typeName", name})
	case !overlaps(w.Schema, t, parent):
		report(add, behind(at), fmt.Sprintf("%s on %s can't be spread inside %s", what, name, parent.Name),
			kv{"code", "cannotSpreadFragment"}, kv{"typeName", name}, kv{"parentName", parent.Name})
	}
}

// overlaps reports whether two composite types share a concrete object type.
func overlaps(sch *ast.Schema, a, b *ast.Definition) bool {
	concrete := func(d *ast.Definition) []*ast.Definition {
		if d.Kind == ast.Object {
			return []*ast.Definition{d}
		}
		return sch.GetPossibleTypes(d)
	}
	for _, x := range concrete(a) {
		if slices.Contains(concrete(b), x) {
			return true
		}
	}
	return false
}

// cycleRule reports a fragment that spreads itself, directly or through others, once per
// cycle: at the fragment the operation entered the cycle by.
func cycleRule(obs *core.Events, add core.AddErrFunc) {
	obs.OnOperation(func(w *core.Walker, op *ast.OperationDefinition) {
		state := map[string]int{} // 1 while being visited, 2 once done
		var visit func(ss ast.SelectionSet)
		visit = func(ss ast.SelectionSet) {
			for _, s := range ss {
				switch s := s.(type) {
				case *ast.Field:
					visit(s.SelectionSet)
				case *ast.InlineFragment:
					visit(s.SelectionSet)
				case *ast.FragmentSpread:
					f := s.Definition
					switch {
					case f == nil || state[f.Name] == 2:
					case state[f.Name] == 1:
						report(add, on(f.Position), fmt.Sprintf("Fragment %s contains an infinite loop", f.Name),
							kv{"code", "infiniteLoop"}, kv{"fragmentName", f.Name})
					default:
						state[f.Name] = 1
						visit(f.SelectionSet)
						state[f.Name] = 2
					}
				}
			}
		}
		visit(op.SelectionSet)
	})
}

// variableRules runs when the walker leaves an operation, when every use of its variables has
// marked them used.
func variableRules(obs *core.Events, add core.AddErrFunc) {
	obs.OnOperation(func(w *core.Walker, op *ast.OperationDefinition) {
		for _, vd := range op.VariableDefinitions {
			name := vd.Variable
			if op.VariableDefinitions.ForName(name) != vd {
				report(add, where{at: vd.Position, host: op.Position}, fmt.Sprintf("There can only be one variable named %q", name),
					kv{"code", "variableNotUnique"}, kv{"variableName", name})
				continue
			}
			if t := namedType(w.Schema, vd.Type.Name()); t == nil || !t.IsInputType() {
				report(add, where{at: vd.Position, host: op.Position}, fmt.Sprintf("%s isn't a defined input type (on $%s)", vd.Type.Name(), name),
					kv{"code", "variableRequiresValidType"}, kv{"typeName", vd.Type.Name()}, kv{"variableName", name})
			}
			if !vd.Used {
				report(add, where{at: vd.Position, host: op.Position, late: 1}, fmt.Sprintf("Variable $%s is declared by %s but not used", name, opName(op)),
					kv{"code", "variableNotUsed"}, kv{"variableName", name})
			}
		}
	})
}
