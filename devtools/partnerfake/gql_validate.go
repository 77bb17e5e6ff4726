package partnerfake

import (
	"fmt"
	"strconv"
	"strings"
)

// Static validation of the selected operation against the schema, with graphql-ruby's messages
// and extension codes (the real API answers these as HTTP 200 with "errors" and no "data").

type validator struct {
	sch      *schema
	doc      *document
	op       *opDef
	label    string
	errs     []*gqlError
	seen     map[string]bool
	varDefs  map[string]*varDef
	usedVars map[string]bool
	visiting map[string]bool
}

func opLabel(op *opDef) string {
	if op.name == "" {
		return op.kind
	}
	return op.kind + " " + op.name
}

func validate(sch *schema, doc *document, op *opDef) []*gqlError {
	v := &validator{sch: sch, doc: doc, op: op, label: opLabel(op), seen: map[string]bool{},
		varDefs: map[string]*varDef{}, usedVars: map[string]bool{}, visiting: map[string]bool{}}
	for _, vd := range op.vars {
		if v.varDefs[vd.name] != nil {
			v.add(fmt.Sprintf("There can only be one variable named %q", vd.name), vd.pos, []any{v.label}, kv{"code", "variableNotUnique"}, kv{"variableName", vd.name})
			continue
		}
		v.varDefs[vd.name] = vd
		if t := sch.types[vd.typ.named()]; t == nil || (t.kind != kScalar && t.kind != kEnum) {
			v.add(fmt.Sprintf("%s isn't a defined input type (on $%s)", vd.typ.named(), vd.name), vd.pos, []any{v.label},
				kv{"code", "variableRequiresValidType"}, kv{"typeName", vd.typ.named()}, kv{"variableName", vd.name})
		}
	}
	v.directives(op.dirs, []any{v.label})
	v.selections(sch.query, op.sels, []any{v.label})
	for _, vd := range op.vars {
		if !v.usedVars[vd.name] {
			v.add(fmt.Sprintf("Variable $%s is declared by %s but not used", vd.name, v.opName()), vd.pos, []any{v.label},
				kv{"code", "variableNotUsed"}, kv{"variableName", vd.name})
		}
	}
	used := map[string]bool{}
	for _, o := range doc.ops {
		doc.spreads(o.sels, used)
	}
	for _, f := range doc.order {
		if !used[f.name] {
			v.add(fmt.Sprintf("Fragment %s was defined, but not used", f.name), f.pos, []any{"fragment " + f.name},
				kv{"code", "useAndDefineFragment"}, kv{"fragmentName", f.name})
		}
	}
	return v.errs
}

func (v *validator) opName() string {
	if v.op.name == "" {
		return "anonymous " + v.op.kind
	}
	return v.op.name
}

// spreads collects the fragments a selection set uses, through nested fragments.
func (d *document) spreads(sels []selection, used map[string]bool) {
	for _, s := range sels {
		switch s := s.(type) {
		case *fieldSel:
			d.spreads(s.sels, used)
		case *inlineFrag:
			d.spreads(s.sels, used)
		case *fragSpread:
			if !used[s.name] {
				used[s.name] = true
				if f := d.frags[s.name]; f != nil {
					d.spreads(f.sels, used)
				}
			}
		}
	}
}

func (v *validator) add(msg string, p pos, path []any, ext ...kv) {
	key := msg + fmt.Sprint(p)
	if v.seen[key] {
		return
	}
	v.seen[key] = true
	v.errs = append(v.errs, &gqlError{Message: msg, Locations: []pos{p}, Path: append([]any(nil), path...), Extensions: ext})
}

func with(path []any, el any) []any { return append(append([]any(nil), path...), el) }

func (v *validator) selections(parent *typeDef, sels []selection, path []any) {
	for _, s := range sels {
		switch s := s.(type) {
		case *fieldSel:
			v.field(parent, s, with(path, s.key()))
		case *inlineFrag:
			label := "..."
			cond := parent
			if s.typeCond != "" {
				label = "... on " + s.typeCond
				if cond = v.condition(s.typeCond, parent, "Fragment", s.pos, with(path, label)); cond == nil {
					continue
				}
			}
			v.directives(s.dirs, path)
			v.selections(cond, s.sels, with(path, label))
		case *fragSpread:
			v.directives(s.dirs, path)
			f := v.doc.frags[s.name]
			if f == nil {
				v.add(fmt.Sprintf("Fragment %s was used, but not defined", s.name), s.pos, with(path, "... "+s.name),
					kv{"code", "useAndDefineFragment"}, kv{"fragmentName", s.name})
				continue
			}
			if v.visiting[s.name] {
				v.add(fmt.Sprintf("Fragment %s contains an infinite loop", s.name), f.pos, []any{"fragment " + s.name},
					kv{"code", "infiniteLoop"}, kv{"fragmentName", s.name})
				continue
			}
			cond := v.condition(f.typeCond, parent, "Fragment "+s.name, s.pos, with(path, "... "+s.name))
			if cond == nil {
				continue
			}
			v.visiting[s.name] = true
			v.directives(f.dirs, []any{"fragment " + s.name})
			v.selections(cond, f.sels, []any{"fragment " + s.name})
			delete(v.visiting, s.name)
		}
	}
}

// condition resolves a fragment's type condition and checks it can apply inside parent.
func (v *validator) condition(name string, parent *typeDef, what string, p pos, path []any) *typeDef {
	t := v.sch.types[name]
	switch {
	case t == nil:
		v.add(fmt.Sprintf("No such type %s, so it can't be a fragment condition", name), p, path,
			kv{"code", "undefinedType"}, kv{"typeName", name})
		return nil
	case t.kind != kObject && t.kind != kInterface:
		v.add(fmt.Sprintf("Invalid fragment on type %s (must be Union, Interface or Object)", name), p, path,
			kv{"code", "fragmentOnNonCompositeType"}, kv{"typeName", name})
		return nil
	case !v.sch.overlaps(t, parent):
		v.add(fmt.Sprintf("%s on %s can't be spread inside %s", what, name, parent.name), p, path,
			kv{"code", "cannotSpreadFragment"}, kv{"typeName", name}, kv{"parentName", parent.name})
		return nil
	}
	return t
}

func (v *validator) field(parent *typeDef, f *fieldSel, path []any) {
	v.directives(f.dirs, path)
	if f.name == "__typename" {
		if f.hasSels {
			v.add(fmt.Sprintf("Selections can't be made on scalars (field '__typename' returns String but has selections [%s])", selNames(f.sels)),
				f.pos, path, kv{"code", "selectionMismatch"}, kv{"nodeName", "field '__typename'"}, kv{"typeName", "String"})
		}
		return
	}
	fd := parent.fields[f.name]
	if fd == nil {
		v.add(fmt.Sprintf("Field '%s' doesn't exist on type '%s'", f.name, parent.name), f.pos, path,
			kv{"code", "undefinedField"}, kv{"typeName", parent.name}, kv{"fieldName", f.name})
		return
	}
	v.arguments(fd, f, path)
	named := v.sch.types[fd.typ.named()]
	switch {
	case named.kind == kScalar || named.kind == kEnum:
		if f.hasSels {
			kind := "scalars"
			if named.kind == kEnum {
				kind = "enums"
			}
			v.add(fmt.Sprintf("Selections can't be made on %s (field '%s' returns %s but has selections [%s])", kind, f.name, named.name, selNames(f.sels)),
				f.pos, path, kv{"code", "selectionMismatch"}, kv{"nodeName", "field '" + f.name + "'"}, kv{"typeName", named.name})
		}
	case !f.hasSels:
		v.add(fmt.Sprintf("Field must have selections (field '%s' returns %s but has no selections. Did you mean '%s { ... }'?)", f.name, describe(fd.typ), f.name),
			f.pos, path, kv{"code", "selectionMismatch"}, kv{"nodeName", "field '" + f.name + "'"}, kv{"typeName", named.name})
	default:
		v.selections(named, f.sels, path)
	}
}

func selNames(sels []selection) string {
	var names []string
	for _, s := range sels {
		if f, ok := s.(*fieldSel); ok {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ", ")
}

func (v *validator) arguments(fd *fieldDef, f *fieldSel, path []any) {
	given := map[string]bool{}
	for _, a := range f.args {
		if given[a.name] {
			v.add(fmt.Sprintf("There can be only one argument named %q", a.name), a.pos, path, kv{"code", "argumentNotUnique"}, kv{"name", a.name})
			continue
		}
		given[a.name] = true
		ad := fd.args[a.name]
		if ad == nil {
			v.add(fmt.Sprintf("Field '%s' doesn't accept argument '%s'", f.name, a.name), a.pos, path,
				kv{"code", "argumentNotAccepted"}, kv{"name", f.name}, kv{"typeName", "Field"}, kv{"argumentName", a.name})
			continue
		}
		v.argValue(a, ad, f.name, path)
	}
	var missing []string
	for _, name := range fd.argOrder {
		ad := fd.args[name]
		if ad.typ.nonNull && ad.def == nil && !given[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		v.add(fmt.Sprintf("Field '%s' is missing required arguments: %s", f.name, strings.Join(missing, ", ")), f.pos, path,
			kv{"code", "missingRequiredArguments"}, kv{"className", "Field"}, kv{"name", f.name}, kv{"arguments", strings.Join(missing, ", ")})
	}
}

func (v *validator) argValue(a *argument, ad *argDef, fieldName string, path []any) {
	ok := v.literalOK(a.val, ad.typ, ad.def != nil, a.name, path)
	if !ok {
		v.add(fmt.Sprintf("Argument '%s' on Field '%s' has an invalid value (%s). Expected type '%s'.", a.name, fieldName, a.val, describe(ad.typ)),
			a.pos, path, kv{"code", "argumentLiteralsIncompatible"}, kv{"typeName", "Field"}, kv{"argumentName", a.name})
	}
}

// literalOK checks a literal against an input type; variables are checked for declaration and
// type compatibility instead (and reported separately).
func (v *validator) literalOK(val *value, t *typeRef, locDefault bool, argName string, path []any) bool {
	if val.kind == vVar {
		v.usedVars[val.s] = true
		vd := v.varDefs[val.s]
		if vd == nil {
			v.add(fmt.Sprintf("Variable $%s is used by %s but not declared", val.s, v.opName()), val.pos, path,
				kv{"code", "variableNotDefined"}, kv{"variableName", val.s})
			return true
		}
		if msg := varCompatible(vd.typ, t, locDefault || vd.def != nil); msg != "" {
			v.add(fmt.Sprintf("%s on variable $%s and argument %s (%s / %s)", msg, val.s, argName, describe(vd.typ), describe(t)),
				val.pos, path, kv{"code", "variableMismatch"}, kv{"variableName", val.s}, kv{"typeName", describe(vd.typ)},
				kv{"argumentName", argName}, kv{"errorMessage", msg})
		}
		return true
	}
	if val.kind == vNull {
		return !t.nonNull
	}
	if t.elem != nil {
		if val.kind != vList {
			return v.literalOK(val, t.elem, false, argName, path)
		}
		for _, e := range val.list {
			if !v.literalOK(e, t.elem, false, argName, path) {
				return false
			}
		}
		return true
	}
	_, ok := coerceLiteral(v.sch, val, t, nil)
	return ok
}

// varCompatible implements "All Variable Usages Are Allowed": "" when allowed, else the kind of
// mismatch as graphql-ruby words it.
func varCompatible(vt, lt *typeRef, hasDefault bool) string {
	if lt.nonNull && !vt.nonNull {
		if !hasDefault {
			return "Nullability mismatch"
		}
		lt = lt.nullable()
	}
	return typesCompatible(vt, lt)
}

func typesCompatible(vt, lt *typeRef) string {
	if lt.nonNull {
		if !vt.nonNull {
			return "Nullability mismatch"
		}
		return typesCompatible(vt.nullable(), lt.nullable())
	}
	if vt.nonNull {
		return typesCompatible(vt.nullable(), lt)
	}
	if lt.elem != nil {
		if vt.elem == nil {
			return "List dimension mismatch"
		}
		return typesCompatible(vt.elem, lt.elem)
	}
	if vt.elem != nil {
		return "List dimension mismatch"
	}
	if vt.name != lt.name {
		return "Type mismatch"
	}
	return ""
}

func (v *validator) directives(dirs []*directive, path []any) {
	for _, d := range dirs {
		if d.name != "include" && d.name != "skip" {
			v.add(fmt.Sprintf("Directive @%s is not defined", d.name), d.pos, path, kv{"code", "undefinedDirective"}, kv{"directiveName", d.name})
			continue
		}
		found := false
		for _, a := range d.args {
			if a.name != "if" {
				v.add(fmt.Sprintf("Directive '@%s' doesn't accept argument '%s'", d.name, a.name), a.pos, path,
					kv{"code", "argumentNotAccepted"}, kv{"name", d.name}, kv{"typeName", "Directive"}, kv{"argumentName", a.name})
				continue
			}
			found = true
			if !v.literalOK(a.val, &typeRef{name: "Boolean", nonNull: true}, false, "if", path) {
				v.add(fmt.Sprintf("Argument 'if' on Directive '%s' has an invalid value (%s). Expected type 'Boolean!'.", d.name, a.val),
					a.pos, path, kv{"code", "argumentLiteralsIncompatible"}, kv{"typeName", "Directive"}, kv{"argumentName", "if"})
			}
		}
		if !found {
			v.add(fmt.Sprintf("Directive '@%s' is missing required arguments: if", d.name), d.pos, path,
				kv{"code", "missingRequiredArguments"}, kv{"className", "Directive"}, kv{"name", d.name}, kv{"arguments", "if"})
		}
	}
}

// coerceLiteral turns a literal (variables resolved from vars) into a Go value for a named or list
// input type: int, float64, string, bool, time.Time, []any or nil.
func coerceLiteral(sch *schema, val *value, t *typeRef, vars map[string]any) (any, bool) {
	if val.kind == vVar {
		x, present := vars[val.s]
		if !present || x == nil {
			return nil, !t.nonNull || present && x != nil
		}
		return x, true
	}
	if val.kind == vNull {
		return nil, !t.nonNull
	}
	if t.elem != nil {
		if val.kind != vList {
			x, ok := coerceLiteral(sch, val, t.elem, vars)
			return []any{x}, ok
		}
		out := make([]any, len(val.list))
		for i, e := range val.list {
			x, ok := coerceLiteral(sch, e, t.elem, vars)
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	}
	switch t.name {
	case "Int":
		if val.kind == vInt {
			n, err := strconv.ParseInt(val.s, 10, 32)
			return int(n), err == nil
		}
	case "Float":
		if val.kind == vInt || val.kind == vFloat {
			f, err := strconv.ParseFloat(val.s, 64)
			return f, err == nil
		}
	case "String", "Decimal", "Url":
		if val.kind == vString {
			return val.s, true
		}
	case "ID":
		if val.kind == vString || val.kind == vInt {
			return val.s, true
		}
	case "Boolean":
		if val.kind == vBool {
			return val.s == "true", true
		}
	case "DateTime":
		if val.kind == vString {
			tm, ok := parseDateTime(val.s)
			return tm, ok
		}
	default:
		if et := sch.types[t.name]; et != nil && et.kind == kEnum && val.kind == vEnum && et.enum[val.s] {
			return val.s, true
		}
	}
	return nil, false
}
