package partnerfake

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small GraphQL lexer and parser for executable documents (queries, fragments, variables,
// directives) and for the schema SDL in gql_schema.go. It follows the GraphQL spec's grammar;
// error messages imitate graphql-ruby, which the platform runs.

type pos struct{ line, col int }

type tokKind uint8

const (
	tEOF tokKind = iota
	tPunct
	tName
	tInt
	tFloat
	tString
)

var tokKindNames = [...]string{"EOF", "PUNCT", "IDENTIFIER", "INT", "FLOAT", "STRING"}

type token struct {
	kind tokKind
	val  string
	pos  pos
}

// gqlError is one entry of the response's "errors" array.
type gqlError struct {
	Message    string
	Locations  []pos
	Path       []any
	Extensions []kv // ordered, so the JSON is stable
}

type kv struct {
	k string
	v any
}

func lex(src string) ([]token, *gqlError) {
	var toks []token
	line, lineStart := 1, 0
	i := 0
	at := func() pos { return pos{line, i - lineStart + 1} }
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			i++
			line, lineStart = line+1, i
		case c == ' ' || c == '\t' || c == '\r' || c == ',':
			i++
		case c == 0xEF && strings.HasPrefix(src[i:], "\uFEFF"):
			i += 3
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.ContainsRune("!$&():=@[]{}|", rune(c)):
			toks = append(toks, token{tPunct, string(c), at()})
			i++
		case c == '.':
			if !strings.HasPrefix(src[i:], "...") {
				return nil, &gqlError{Message: fmt.Sprintf("Parse error on %q at [%d, %d]", ".", line, i-lineStart+1), Locations: []pos{at()}}
			}
			toks = append(toks, token{tPunct, "...", at()})
			i += 3
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			p, j := at(), i
			for i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9') {
				i++
			}
			toks = append(toks, token{tName, src[j:i], p})
		case c == '-' || c >= '0' && c <= '9':
			p, j, kind := at(), i, tInt
			if src[i] == '-' {
				i++
			}
			digits := func() int {
				k := i
				for i < len(src) && src[i] >= '0' && src[i] <= '9' {
					i++
				}
				return i - k
			}
			if digits() == 0 {
				return nil, &gqlError{Message: fmt.Sprintf("Parse error on %q at [%d, %d]", src[j:i], p.line, p.col), Locations: []pos{p}}
			}
			if i < len(src) && src[i] == '.' {
				i++
				kind = tFloat
				digits()
			}
			if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
				i++
				kind = tFloat
				if i < len(src) && (src[i] == '+' || src[i] == '-') {
					i++
				}
				digits()
			}
			toks = append(toks, token{kind, src[j:i], p})
		case c == '"':
			p := at()
			s, n, err := lexString(src[i:])
			if err != "" {
				return nil, &gqlError{Message: fmt.Sprintf("Parse error on bad string (%s) at [%d, %d]", err, p.line, p.col), Locations: []pos{p}}
			}
			for _, ch := range src[i : i+n] {
				if ch == '\n' {
					line++
				}
			}
			if nl := strings.LastIndexByte(src[i:i+n], '\n'); nl >= 0 {
				lineStart = i + nl + 1
			}
			i += n
			toks = append(toks, token{tString, s, p})
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			p := at()
			return nil, &gqlError{Message: fmt.Sprintf("Parse error on %q (UNKNOWN_CHAR) at [%d, %d]", string(r), p.line, p.col), Locations: []pos{p}}
		}
	}
	toks = append(toks, token{tEOF, "", at()})
	return toks, nil
}

// lexString reads a "string" or """block string""" and returns its value and length in src.
func lexString(src string) (string, int, string) {
	if strings.HasPrefix(src, `"""`) {
		end := 3
		var b strings.Builder
		for {
			if end >= len(src) {
				return "", 0, "unterminated block string"
			}
			if strings.HasPrefix(src[end:], `\"""`) {
				b.WriteString(`"""`)
				end += 4
				continue
			}
			if strings.HasPrefix(src[end:], `"""`) {
				return blockStringValue(b.String()), end + 3, ""
			}
			b.WriteByte(src[end])
			end++
		}
	}
	var b strings.Builder
	for i := 1; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			return b.String(), i + 1, ""
		case c == '\n':
			return "", 0, "unterminated string"
		case c == '\\':
			i++
			if i >= len(src) {
				return "", 0, "unterminated string"
			}
			switch src[i] {
			case '"', '\\', '/':
				b.WriteByte(src[i])
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if i+4 >= len(src) {
					return "", 0, "bad unicode escape"
				}
				n, err := strconv.ParseUint(src[i+1:i+5], 16, 32)
				if err != nil {
					return "", 0, "bad unicode escape"
				}
				b.WriteRune(rune(n))
				i += 4
			default:
				return "", 0, "bad escape"
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, "unterminated string"
}

// blockStringValue removes the common indentation and blank first/last lines (GraphQL spec).
func blockStringValue(raw string) string {
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	indent := -1
	for _, l := range lines[1:] {
		t := strings.TrimLeft(l, " \t")
		if t != "" && (indent < 0 || len(l)-len(t) < indent) {
			indent = len(l) - len(t)
		}
	}
	for i := 1; i < len(lines) && indent > 0; i++ {
		if len(lines[i]) >= indent {
			lines[i] = lines[i][indent:]
		}
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// AST of an executable document.

type document struct {
	ops   []*opDef
	frags map[string]*fragDef
	order []*fragDef
}

type opDef struct {
	kind, name string
	vars       []*varDef
	dirs       []*directive
	sels       []selection
	pos        pos
}

type varDef struct {
	name string
	typ  *typeRef
	def  *value
	pos  pos
}

type typeRef struct {
	name    string
	elem    *typeRef // list element when name == ""
	nonNull bool
}

func (t *typeRef) String() string {
	s := t.name
	if t.elem != nil {
		s = "[" + t.elem.String() + "]"
	}
	if t.nonNull {
		s += "!"
	}
	return s
}

// nullable returns the type without its outer non-null marker.
func (t *typeRef) nullable() *typeRef {
	c := *t
	c.nonNull = false
	return &c
}

// named returns the innermost named type.
func (t *typeRef) named() string {
	for t.elem != nil {
		t = t.elem
	}
	return t.name
}

type selection interface{ position() pos }

type fieldSel struct {
	alias, name string
	args        []*argument
	dirs        []*directive
	sels        []selection
	hasSels     bool
	pos         pos
}

type inlineFrag struct {
	typeCond string
	dirs     []*directive
	sels     []selection
	pos      pos
}

type fragSpread struct {
	name string
	dirs []*directive
	pos  pos
}

type fragDef struct {
	name, typeCond string
	dirs           []*directive
	sels           []selection
	pos            pos
}

func (f *fieldSel) position() pos   { return f.pos }
func (f *inlineFrag) position() pos { return f.pos }
func (f *fragSpread) position() pos { return f.pos }

func (f *fieldSel) key() string {
	if f.alias != "" {
		return f.alias
	}
	return f.name
}

type argument struct {
	name string
	val  *value
	pos  pos
}

type directive struct {
	name string
	args []*argument
	pos  pos
}

type valKind uint8

const (
	vVar valKind = iota
	vInt
	vFloat
	vString
	vBool
	vNull
	vEnum
	vList
	vObject
)

type value struct {
	kind   valKind
	s      string
	list   []*value
	fields []*argument // object fields
	pos    pos
}

// String prints a value as GraphQL source, for error messages.
func (v *value) String() string {
	switch v.kind {
	case vVar:
		return "$" + v.s
	case vString:
		return strconv.Quote(v.s)
	case vList:
		parts := make([]string, len(v.list))
		for i, x := range v.list {
			parts[i] = x.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case vObject:
		parts := make([]string, len(v.fields))
		for i, f := range v.fields {
			parts[i] = f.name + ": " + f.val.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.s
}

type parser struct {
	toks []token
	i    int
	err  *gqlError
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) fail(t token) {
	if p.err != nil {
		return
	}
	if t.kind == tEOF {
		p.err = &gqlError{Message: "Unexpected end of document", Locations: []pos{t.pos}}
		return
	}
	p.err = &gqlError{
		Message:   fmt.Sprintf("Parse error on %q (%s) at [%d, %d]", t.val, tokKindNames[t.kind], t.pos.line, t.pos.col),
		Locations: []pos{t.pos},
	}
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.val == s
}

func (p *parser) skipPunct(s string) bool {
	if p.isPunct(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) {
	if !p.skipPunct(s) {
		p.fail(p.peek())
	}
}

func (p *parser) expectName() string {
	t := p.peek()
	if t.kind != tName {
		p.fail(t)
		return ""
	}
	p.i++
	return t.val
}

func parseDocument(src string) (*document, *gqlError) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	doc := &document{frags: map[string]*fragDef{}}
	for p.err == nil && p.peek().kind != tEOF {
		t := p.peek()
		switch {
		case t.kind == tPunct && t.val == "{":
			doc.ops = append(doc.ops, &opDef{kind: "query", sels: p.selectionSet(), pos: t.pos})
		case t.kind == tName && (t.val == "query" || t.val == "mutation" || t.val == "subscription"):
			p.next()
			op := &opDef{kind: t.val, pos: t.pos}
			if p.peek().kind == tName {
				op.name = p.next().val
			}
			if p.skipPunct("(") {
				for p.err == nil && !p.skipPunct(")") {
					op.vars = append(op.vars, p.varDef())
				}
			}
			op.dirs = p.directives()
			op.sels = p.selectionSet()
			doc.ops = append(doc.ops, op)
		case t.kind == tName && t.val == "fragment":
			p.next()
			f := &fragDef{pos: t.pos}
			f.name = p.expectName()
			if p.expectName() != "on" && p.err == nil {
				p.fail(p.toks[p.i-1])
			}
			f.typeCond = p.expectName()
			f.dirs = p.directives()
			f.sels = p.selectionSet()
			if _, dup := doc.frags[f.name]; dup && p.err == nil {
				p.err = &gqlError{Message: fmt.Sprintf("Fragment name %q must be unique", f.name), Locations: []pos{f.pos}}
			}
			doc.frags[f.name] = f
			doc.order = append(doc.order, f)
		default:
			p.fail(t)
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(doc.ops) == 0 {
		return nil, &gqlError{Message: "No operations in document"}
	}
	return doc, nil
}

func (p *parser) varDef() *varDef {
	t := p.peek()
	p.expectPunct("$")
	v := &varDef{name: p.expectName(), pos: t.pos}
	p.expectPunct(":")
	v.typ = p.typeRef()
	if p.skipPunct("=") {
		v.def = p.value(true)
	}
	p.directives()
	return v
}

func (p *parser) typeRef() *typeRef {
	var t *typeRef
	if p.skipPunct("[") {
		t = &typeRef{elem: p.typeRef()}
		p.expectPunct("]")
	} else {
		t = &typeRef{name: p.expectName()}
	}
	if p.skipPunct("!") {
		t.nonNull = true
	}
	return t
}

func (p *parser) directives() []*directive {
	var ds []*directive
	for p.err == nil && p.isPunct("@") {
		t := p.next()
		d := &directive{name: p.expectName(), pos: t.pos}
		d.args = p.arguments(false)
		ds = append(ds, d)
	}
	return ds
}

func (p *parser) arguments(constant bool) []*argument {
	var args []*argument
	if p.skipPunct("(") {
		for p.err == nil && !p.skipPunct(")") {
			t := p.peek()
			a := &argument{name: p.expectName(), pos: t.pos}
			p.expectPunct(":")
			a.val = p.value(constant)
			args = append(args, a)
		}
	}
	return args
}

func (p *parser) selectionSet() []selection {
	var sels []selection
	p.expectPunct("{")
	for p.err == nil && !p.skipPunct("}") {
		t := p.peek()
		if p.skipPunct("...") {
			if p.peek().kind == tName && p.peek().val != "on" {
				s := &fragSpread{name: p.next().val, pos: t.pos}
				s.dirs = p.directives()
				sels = append(sels, s)
				continue
			}
			f := &inlineFrag{pos: t.pos}
			if p.peek().kind == tName && p.peek().val == "on" {
				p.next()
				f.typeCond = p.expectName()
			}
			f.dirs = p.directives()
			f.sels = p.selectionSet()
			sels = append(sels, f)
			continue
		}
		f := &fieldSel{pos: t.pos}
		f.name = p.expectName()
		if p.skipPunct(":") {
			f.alias, f.name = f.name, p.expectName()
		}
		f.args = p.arguments(false)
		f.dirs = p.directives()
		if p.isPunct("{") {
			f.hasSels = true
			f.sels = p.selectionSet()
		}
		sels = append(sels, f)
	}
	if len(sels) == 0 && p.err == nil {
		p.fail(p.toks[p.i-1])
	}
	return sels
}

func (p *parser) value(constant bool) *value {
	t := p.peek()
	v := &value{pos: t.pos}
	switch {
	case t.kind == tPunct && t.val == "$" && !constant:
		p.next()
		v.kind, v.s = vVar, p.expectName()
	case t.kind == tInt:
		p.next()
		v.kind, v.s = vInt, t.val
	case t.kind == tFloat:
		p.next()
		v.kind, v.s = vFloat, t.val
	case t.kind == tString:
		p.next()
		v.kind, v.s = vString, t.val
	case t.kind == tName:
		p.next()
		switch t.val {
		case "true", "false":
			v.kind = vBool
		case "null":
			v.kind = vNull
		default:
			v.kind = vEnum
		}
		v.s = t.val
	case t.kind == tPunct && t.val == "[":
		p.next()
		v.kind = vList
		for p.err == nil && !p.skipPunct("]") {
			v.list = append(v.list, p.value(constant))
		}
	case t.kind == tPunct && t.val == "{":
		p.next()
		v.kind = vObject
		for p.err == nil && !p.skipPunct("}") {
			ft := p.peek()
			f := &argument{name: p.expectName(), pos: ft.pos}
			p.expectPunct(":")
			f.val = p.value(constant)
			v.fields = append(v.fields, f)
		}
	default:
		p.fail(t)
	}
	return v
}
