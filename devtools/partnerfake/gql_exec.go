package partnerfake

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
)

// gqlRequest is the JSON body of a GraphQL POST.
type gqlRequest struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// execCtx executes one operation, writing the response JSON directly into buf in selection order
// (the response's key order follows the query, as GraphQL requires; Go maps would not).
type execCtx struct {
	srv   *Server
	sch   *ast.Schema
	vars  map[string]any
	floor int64 // history floor, seconds since the dataset base (records before it are hidden)
	buf   []byte
	errs  []*gqlError
	style AmountStyle
	// unstable is true on the unstable version, whose schema exposes processingFee.
	unstable bool
}

// executeRequest runs a request and returns the response body (always HTTP 200 at this point).
func (s *Server) executeRequest(req *gqlRequest, version string, floor int64) []byte {
	sch := stableSchema
	unstable := s.unstable[version]
	if unstable {
		sch = unstableSchema
	}
	doc, perr := parseQuery(req.Query)
	if perr != nil {
		return errorsOnly([]*gqlError{perr})
	}
	op, oerr := selectOperation(doc, req.OperationName)
	if oerr != nil {
		return errorsOnly([]*gqlError{oerr})
	}
	if op.Operation != ast.Query {
		return errorsOnly([]*gqlError{{Message: fmt.Sprintf("The fake Partner API serves queries only; %s operations are not implemented", op.Operation),
			Locations: []pos{posOf(op.Position)}}})
	}
	if errs := validate(sch, doc); len(errs) > 0 {
		return errorsOnly(errs)
	}
	vars, verrs := coerceVariables(sch, op, req.Variables)
	if len(verrs) > 0 {
		return errorsOnly(verrs)
	}
	x := &execCtx{srv: s, sch: sch, vars: vars, floor: floor, style: s.cfg.AmountStyle, unstable: unstable}
	x.buf = append(make([]byte, 0, 64<<10), `{"data":`...)
	start := len(x.buf)
	if !x.object(sch.Query, rootVal{}, op.SelectionSet, nil) {
		x.buf = append(x.buf[:start], "null"...)
	}
	if len(x.errs) > 0 {
		x.buf = append(x.buf, `,"errors":`...)
		x.buf = appendErrors(x.buf, x.errs)
	}
	return append(x.buf, '}')
}

func selectOperation(doc *ast.QueryDocument, name string) (*ast.OperationDefinition, *gqlError) {
	switch {
	case len(doc.Operations) == 0:
		return nil, &gqlError{Message: "No operations in document"}
	case name == "" && len(doc.Operations) > 1:
		return nil, &gqlError{Message: "An operation name is required"}
	case name == "":
		return doc.Operations[0], nil
	}
	if op := doc.Operations.ForName(name); op != nil {
		return op, nil
	}
	return nil, &gqlError{Message: fmt.Sprintf("No operation named %q", name)}
}

func errorsOnly(errs []*gqlError) []byte {
	return append(appendErrors([]byte(`{"errors":`), errs), '}')
}

type collected struct {
	key    string
	fields []*ast.Field
}

// collect implements CollectFields: fields by response key in first-seen order, through fragments
// whose type condition the runtime type satisfies, honouring @skip and @include.
func (x *execCtx) collect(t *ast.Definition, sels ast.SelectionSet, out []collected, seenFrags map[string]bool) []collected {
	for _, s := range sels {
		switch s := s.(type) {
		case *ast.Field:
			if !x.included(s.Directives) {
				continue
			}
			k := s.Alias
			found := false
			for i := range out {
				if out[i].key == k {
					out[i].fields = append(out[i].fields, s)
					found = true
					break
				}
			}
			if !found {
				out = append(out, collected{key: k, fields: []*ast.Field{s}})
			}
		case *ast.InlineFragment:
			if x.included(s.Directives) && applies(s.TypeCondition, t) {
				out = x.collect(t, s.SelectionSet, out, seenFrags)
			}
		case *ast.FragmentSpread:
			f := s.Definition // resolved by validation
			if seenFrags[s.Name] || !x.included(s.Directives) || !applies(f.TypeCondition, t) {
				continue
			}
			seenFrags[s.Name] = true
			out = x.collect(t, f.SelectionSet, out, seenFrags)
		}
	}
	return out
}

// applies reports whether a type condition holds for the object type t: the schema has no
// unions and no interface implementing another, so an object's own list of interfaces is all.
func applies(cond string, t *ast.Definition) bool {
	return cond == "" || cond == t.Name || slices.Contains(t.Interfaces, cond)
}

func (x *execCtx) included(dirs ast.DirectiveList) bool {
	for _, d := range dirs {
		for _, a := range d.Arguments {
			v, _ := coerceLiteral(x.sch, a.Value, booleanType, x.vars)
			b, _ := v.(bool)
			if d.Name == "skip" && b || d.Name == "include" && !b {
				return false
			}
		}
	}
	return true
}

// object writes one object; false means a non-null field below it failed and the null must
// propagate to the parent.
func (x *execCtx) object(t *ast.Definition, obj any, sels ast.SelectionSet, path []any) bool {
	fields := x.collect(t, sels, nil, map[string]bool{})
	x.buf = append(x.buf, '{')
	for i, c := range fields {
		if i > 0 {
			x.buf = append(x.buf, ',')
		}
		x.buf = appendString(x.buf, c.key)
		x.buf = append(x.buf, ':')
		f := c.fields[0]
		if f.Name == "__typename" {
			x.buf = appendString(x.buf, t.Name)
			continue
		}
		fd := t.Fields.ForName(f.Name)
		fpath := with(path, c.key)
		args := x.arguments(fd, f)
		v, err := x.resolve(obj, f.Name, args)
		if err != nil {
			x.errs = append(x.errs, &gqlError{Message: err.Error(), Locations: []pos{posOf(f.Position)}, Path: fpath})
			v = nil
		}
		var sub ast.SelectionSet
		for _, cf := range c.fields {
			sub = append(sub, cf.SelectionSet...)
		}
		if !x.complete(fd.Type, v, sub, fpath, t.Name+"."+f.Name, err != nil, posOf(f.Position)) {
			return false
		}
	}
	x.buf = append(x.buf, '}')
	return true
}

func (x *execCtx) arguments(fd *ast.FieldDefinition, f *ast.Field) map[string]any {
	args := map[string]any{}
	for _, a := range f.Arguments {
		if ad := fd.Arguments.ForName(a.Name); ad != nil {
			if v, ok := coerceLiteral(x.sch, a.Value, ad.Type, x.vars); ok && v != nil {
				args[a.Name] = v
			}
		}
	}
	for _, ad := range fd.Arguments {
		if _, ok := args[ad.Name]; !ok && ad.DefaultValue != nil {
			args[ad.Name], _ = coerceLiteral(x.sch, ad.DefaultValue, ad.Type, nil)
		}
	}
	return args
}

// complete writes a resolved value per its declared type; false propagates a null upwards.
func (x *execCtx) complete(t *ast.Type, v any, sels ast.SelectionSet, path []any, fieldName string, reported bool, p pos) bool {
	start := len(x.buf)
	if t.NonNull {
		if v == nil {
			if !reported {
				x.errs = append(x.errs, &gqlError{Message: "Cannot return null for non-nullable field " + fieldName, Locations: []pos{p}, Path: path})
			}
			return false
		}
		if !x.completeValue(nullableType(t), v, sels, path, fieldName, p) {
			x.buf = x.buf[:start]
			return false
		}
		return true
	}
	if v == nil {
		x.buf = append(x.buf, "null"...)
		return true
	}
	if !x.completeValue(t, v, sels, path, fieldName, p) {
		x.buf = append(x.buf[:start], "null"...)
	}
	return true
}

func (x *execCtx) completeValue(t *ast.Type, v any, sels ast.SelectionSet, path []any, fieldName string, p pos) bool {
	if t.Elem != nil {
		items := v.([]any)
		x.buf = append(x.buf, '[')
		for i, item := range items {
			if i > 0 {
				x.buf = append(x.buf, ',')
			}
			if !x.complete(t.Elem, item, sels, with(path, i), fieldName, false, p) {
				return false
			}
		}
		x.buf = append(x.buf, ']')
		return true
	}
	if x.sch.Types[t.NamedType].IsLeafType() {
		x.buf = x.appendScalar(x.buf, v)
		return true
	}
	return x.object(x.sch.Types[typeOf(v)], v, sels, path)
}

func (x *execCtx) appendScalar(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case time.Time:
		return appendString(b, v.UTC().Format("2006-01-02T15:04:05Z"))
	case decimal:
		return appendString(b, FormatAmount(v.minor, v.cur, x.style))
	}
	return append(b, "null"...)
}

// JSON output helpers.

func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendAny(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case bool:
		return strconv.AppendBool(b, v)
	case []kv:
		b = append(b, '{')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e.k)
			b = append(b, ':')
			b = appendAny(b, e.v)
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendAny(b, e)
		}
		return append(b, ']')
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

func appendErrors(b []byte, errs []*gqlError) []byte {
	b = append(b, '[')
	for i, e := range errs {
		if i > 0 {
			b = append(b, ',')
		}
		obj := []kv{{"message", e.Message}}
		if len(e.Locations) > 0 {
			locs := make([]any, len(e.Locations))
			for j, l := range e.Locations {
				locs[j] = []kv{{"line", l.line}, {"column", l.col}}
			}
			obj = append(obj, kv{"locations", locs})
		}
		if len(e.Path) > 0 {
			obj = append(obj, kv{"path", e.Path})
		}
		if len(e.Extensions) > 0 {
			obj = append(obj, kv{"extensions", e.Extensions})
		}
		b = appendAny(b, obj)
	}
	return append(b, ']')
}
