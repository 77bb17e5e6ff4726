package partnerfake

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
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
	sch   *schema
	doc   *document
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
	doc, perr := parseDocument(req.Query)
	if perr != nil {
		return errorsOnly([]*gqlError{perr})
	}
	op, oerr := selectOperation(doc, req.OperationName)
	if oerr != nil {
		return errorsOnly([]*gqlError{oerr})
	}
	if op.kind != "query" {
		return errorsOnly([]*gqlError{{Message: fmt.Sprintf("The fake Partner API serves queries only; %s operations are not implemented", op.kind),
			Locations: []pos{op.pos}}})
	}
	if errs := validate(sch, doc, op); len(errs) > 0 {
		return errorsOnly(errs)
	}
	vars, verrs := coerceVariables(sch, op, req.Variables)
	if len(verrs) > 0 {
		return errorsOnly(verrs)
	}
	x := &execCtx{srv: s, sch: sch, doc: doc, vars: vars, floor: floor, style: s.cfg.AmountStyle, unstable: unstable}
	x.buf = append(make([]byte, 0, 64<<10), `{"data":`...)
	start := len(x.buf)
	if !x.object(sch.query, rootVal{}, op.sels, nil) {
		x.buf = append(x.buf[:start], "null"...)
	}
	if len(x.errs) > 0 {
		x.buf = append(x.buf, `,"errors":`...)
		x.buf = appendErrors(x.buf, x.errs)
	}
	return append(x.buf, '}')
}

func selectOperation(doc *document, name string) (*opDef, *gqlError) {
	if name == "" {
		if len(doc.ops) > 1 {
			return nil, &gqlError{Message: "An operation name is required"}
		}
		return doc.ops[0], nil
	}
	for _, op := range doc.ops {
		if op.name == name {
			return op, nil
		}
	}
	return nil, &gqlError{Message: fmt.Sprintf("No operation named %q", name)}
}

func errorsOnly(errs []*gqlError) []byte {
	return append(appendErrors([]byte(`{"errors":`), errs), '}')
}

// coerceVariables converts the request's JSON variables to Go values per their declared types.
func coerceVariables(sch *schema, op *opDef, raw map[string]any) (map[string]any, []*gqlError) {
	vars := map[string]any{}
	var errs []*gqlError
	for _, vd := range op.vars {
		x, present := raw[vd.name]
		if !present && vd.def != nil {
			v, _ := coerceLiteral(sch, vd.def, vd.typ, nil)
			vars[vd.name] = v
			continue
		}
		if !present && !vd.typ.nonNull {
			continue
		}
		v, problem := coerceJSON(sch, x, vd.typ)
		if problem != "" {
			errs = append(errs, &gqlError{
				Message:    fmt.Sprintf("Variable $%s of type %s was provided invalid value", vd.name, describe(vd.typ)),
				Locations:  []pos{vd.pos},
				Extensions: []kv{{"value", x}, {"problems", []any{[]kv{{"path", []any{}}, {"explanation", problem}}}}},
			})
			continue
		}
		vars[vd.name] = v
	}
	return vars, errs
}

// coerceJSON converts one JSON value to an input type; the second result explains a failure.
func coerceJSON(sch *schema, x any, t *typeRef) (any, string) {
	if x == nil {
		if t.nonNull {
			return nil, "Expected value to not be null"
		}
		return nil, ""
	}
	if t.elem != nil {
		arr, ok := x.([]any)
		if !ok {
			v, p := coerceJSON(sch, x, t.elem)
			return []any{v}, p
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			v, p := coerceJSON(sch, e, t.elem)
			if p != "" {
				return nil, p
			}
			out[i] = v
		}
		return out, ""
	}
	bad := fmt.Sprintf("Could not coerce value %s to %s", jsonText(x), t.name)
	switch t.name {
	case "Int":
		if n, ok := x.(json.Number); ok {
			if i, err := n.Int64(); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
				return int(i), ""
			}
		}
	case "Float":
		if n, ok := x.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f, ""
			}
		}
	case "String", "Decimal", "Url":
		if s, ok := x.(string); ok {
			return s, ""
		}
	case "ID":
		switch v := x.(type) {
		case string:
			return v, ""
		case json.Number:
			if _, err := v.Int64(); err == nil {
				return v.String(), ""
			}
		}
	case "Boolean":
		if b, ok := x.(bool); ok {
			return b, ""
		}
	case "DateTime":
		if s, ok := x.(string); ok {
			if tm, ok := parseDateTime(s); ok {
				return tm, ""
			}
		}
	default:
		if et := sch.types[t.name]; et != nil && et.kind == kEnum {
			if s, ok := x.(string); ok && et.enum[s] {
				return s, ""
			}
			return nil, fmt.Sprintf("Expected %s to be one of: %s", jsonText(x), t.name)
		}
	}
	return nil, bad
}

func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// parseDateTime accepts ISO-8601 date-times with a zone (as the API documents), including the
// basic "+0000" offset some clients send, and, leniently, a zoneless date-time or a bare date
// (taken as UTC).
func parseDateTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

type collected struct {
	key    string
	fields []*fieldSel
}

// collect implements CollectFields: fields by response key in first-seen order, through fragments
// whose type condition the runtime type satisfies, honouring @skip and @include.
func (x *execCtx) collect(t *typeDef, sels []selection, out []collected, seenFrags map[string]bool) []collected {
	for _, s := range sels {
		switch s := s.(type) {
		case *fieldSel:
			if !x.included(s.dirs) {
				continue
			}
			k := s.key()
			found := false
			for i := range out {
				if out[i].key == k {
					out[i].fields = append(out[i].fields, s)
					found = true
					break
				}
			}
			if !found {
				out = append(out, collected{key: k, fields: []*fieldSel{s}})
			}
		case *inlineFrag:
			if x.included(s.dirs) && x.applies(s.typeCond, t) {
				out = x.collect(t, s.sels, out, seenFrags)
			}
		case *fragSpread:
			f := x.doc.frags[s.name]
			if seenFrags[s.name] || !x.included(s.dirs) || !x.applies(f.typeCond, t) {
				continue
			}
			seenFrags[s.name] = true
			out = x.collect(t, f.sels, out, seenFrags)
		}
	}
	return out
}

func (x *execCtx) applies(cond string, t *typeDef) bool {
	if cond == "" || cond == t.name {
		return true
	}
	ct := x.sch.types[cond]
	return ct != nil && ct.possible[t.name]
}

func (x *execCtx) included(dirs []*directive) bool {
	for _, d := range dirs {
		for _, a := range d.args {
			v, _ := coerceLiteral(x.sch, a.val, &typeRef{name: "Boolean"}, x.vars)
			b, _ := v.(bool)
			if d.name == "skip" && b || d.name == "include" && !b {
				return false
			}
		}
	}
	return true
}

// object writes one object; false means a non-null field below it failed and the null must
// propagate to the parent.
func (x *execCtx) object(t *typeDef, obj any, sels []selection, path []any) bool {
	fields := x.collect(t, sels, nil, map[string]bool{})
	x.buf = append(x.buf, '{')
	for i, c := range fields {
		if i > 0 {
			x.buf = append(x.buf, ',')
		}
		x.buf = appendString(x.buf, c.key)
		x.buf = append(x.buf, ':')
		f := c.fields[0]
		if f.name == "__typename" {
			x.buf = appendString(x.buf, t.name)
			continue
		}
		fd := t.fields[f.name]
		fpath := with(path, c.key)
		args := x.arguments(fd, f)
		v, err := x.resolve(obj, f.name, args)
		if err != nil {
			x.errs = append(x.errs, &gqlError{Message: err.Error(), Locations: []pos{f.pos}, Path: fpath})
			v = nil
		}
		var sub []selection
		for _, cf := range c.fields {
			sub = append(sub, cf.sels...)
		}
		if !x.complete(fd.typ, v, sub, fpath, t.name+"."+f.name, err != nil, f.pos) {
			return false
		}
	}
	x.buf = append(x.buf, '}')
	return true
}

func (x *execCtx) arguments(fd *fieldDef, f *fieldSel) map[string]any {
	args := map[string]any{}
	for _, a := range f.args {
		if ad := fd.args[a.name]; ad != nil {
			if v, ok := coerceLiteral(x.sch, a.val, ad.typ, x.vars); ok && v != nil {
				args[a.name] = v
			}
		}
	}
	for name, ad := range fd.args {
		if _, ok := args[name]; !ok && ad.def != nil {
			args[name], _ = coerceLiteral(x.sch, ad.def, ad.typ, nil)
		}
	}
	return args
}

// complete writes a resolved value per its declared type; false propagates a null upwards.
func (x *execCtx) complete(t *typeRef, v any, sels []selection, path []any, fieldName string, reported bool, p pos) bool {
	start := len(x.buf)
	if t.nonNull {
		if v == nil {
			if !reported {
				x.errs = append(x.errs, &gqlError{Message: "Cannot return null for non-nullable field " + fieldName, Locations: []pos{p}, Path: path})
			}
			return false
		}
		if !x.completeValue(t.nullable(), v, sels, path, fieldName, p) {
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

func (x *execCtx) completeValue(t *typeRef, v any, sels []selection, path []any, fieldName string, p pos) bool {
	if t.elem != nil {
		items := v.([]any)
		x.buf = append(x.buf, '[')
		for i, item := range items {
			if i > 0 {
				x.buf = append(x.buf, ',')
			}
			if !x.complete(t.elem, item, sels, with(path, i), fieldName, false, p) {
				return false
			}
		}
		x.buf = append(x.buf, ']')
		return true
	}
	if x.sch.isLeaf(t.name) {
		x.buf = x.appendScalar(x.buf, v)
		return true
	}
	return x.object(x.sch.types[typeOf(v)], v, sels, path)
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
