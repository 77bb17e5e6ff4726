package partnerfake

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// Documents are lexed and parsed by gqlparser. Its syntax errors say what was expected; the
// platform runs graphql-ruby, whose errors name the token found instead ("Parse error on ")"
// (PUNCT) at [1, 8]"), so they are reworded here (README.md, "Selection sets are honoured").

type pos struct{ line, col int }

func posOf(p *ast.Position) pos {
	if p == nil {
		return pos{}
	}
	return pos{p.Line, p.Column}
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

func parseQuery(src string) (*ast.QueryDocument, *gqlError) {
	source := &ast.Source{Input: src}
	doc, err := parser.ParseQuery(source)
	if err == nil {
		return doc, nil
	}
	var ge *gqlerror.Error
	if !errors.As(err, &ge) || len(ge.Locations) == 0 {
		return nil, &gqlError{Message: err.Error()}
	}
	return nil, syntaxError(source, ge.Locations[0])
}

// syntaxError lexes the document again up to where the parser stopped, to name the token there
// or the characters the lexer could not read.
func syntaxError(source *ast.Source, at gqlerror.Location) *gqlError {
	lx := lexer.New(source)
	end := 0 // rune offset after the last token read
	for {
		tok, err := lx.ReadToken()
		if err != nil {
			return lexError(source.Input, end, err.Error())
		}
		end = tok.Pos.End
		if tok.Kind == lexer.Comment {
			continue
		}
		if tok.Kind == lexer.EOF {
			return &gqlError{Message: "Unexpected end of document", Locations: []pos{posOf(&tok.Pos)}}
		}
		if tok.Pos.Line > at.Line || tok.Pos.Line == at.Line && tok.Pos.Column >= at.Column {
			// A string token's column is past its opening quotes; its start offset is not.
			var p pos
			p.line, p.col, _ = locate(source.Input, tok.Pos.Start)
			kind, val := "PUNCT", tok.Kind.String()
			switch tok.Kind {
			case lexer.Name:
				kind, val = "IDENTIFIER", tok.Value
			case lexer.Int:
				kind, val = "INT", tok.Value
			case lexer.Float:
				kind, val = "FLOAT", tok.Value
			case lexer.String, lexer.BlockString:
				kind, val = "STRING", tok.Value
			}
			return &gqlError{Message: fmt.Sprintf("Parse error on %q (%s) at [%d, %d]", val, kind, p.line, p.col), Locations: []pos{p}}
		}
	}
}

// lexError words a lexer failure on the token starting after rune offset end (past whitespace).
func lexError(src string, end int, msg string) *gqlError {
	line, col, off := locate(src, end)
	for off < len(src) && (strings.IndexByte(" \t,\r\n", src[off]) >= 0 || strings.HasPrefix(src[off:], "\uFEFF")) {
		r, size := utf8.DecodeRuneInString(src[off:])
		off += size
		if col++; r == '\n' || r == '\r' && !strings.HasPrefix(src[off:], "\n") {
			line, col = line+1, 1
		}
	}
	p := pos{line, col}
	r, _ := utf8.DecodeRuneInString(src[off:])
	var text string
	switch {
	case r == '"':
		problem := "unterminated string"
		switch {
		case strings.HasPrefix(src[off:], `"""`):
			problem = "unterminated block string"
		case strings.Contains(msg, `sequence: \u`):
			problem = "bad unicode escape"
		case strings.Contains(msg, "escape sequence"):
			problem = "bad escape"
		case strings.Contains(msg, "within String"):
			problem = "bad character"
		}
		text = fmt.Sprintf("Parse error on bad string (%s) at [%d, %d]", problem, line, col)
	case r == '.' || r == '-' || r >= '0' && r <= '9':
		text = fmt.Sprintf("Parse error on %q at [%d, %d]", string(r), line, col)
	default:
		text = fmt.Sprintf("Parse error on %q (UNKNOWN_CHAR) at [%d, %d]", string(r), line, col)
	}
	return &gqlError{Message: text, Locations: []pos{p}}
}

// locate returns the line, column and byte offset of rune offset n, counting line breaks as
// the lexer does (\n, \r\n or a lone \r).
func locate(src string, n int) (line, col, off int) {
	line, lineStart, i := 1, 0, 0
	for off, r := range src {
		if i == n {
			return line, n - lineStart + 1, off
		}
		i++
		if r == '\n' || r == '\r' && !strings.HasPrefix(src[off+1:], "\n") {
			line, lineStart = line+1, i
		}
	}
	return line, n - lineStart + 1, len(src)
}
