package partnerfake

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
)

// Input values: literals in the document and the request's JSON variables, coerced to Go values
// for the resolvers (int, float64, string, bool, time.Time, []any or nil), and the type rules
// validation checks them by.

// coerceVariables converts the request's JSON variables to Go values per their declared types.
func coerceVariables(sch *ast.Schema, op *ast.OperationDefinition, raw map[string]any) (map[string]any, []*gqlError) {
	vars := map[string]any{}
	var errs []*gqlError
	for _, vd := range op.VariableDefinitions {
		x, present := raw[vd.Variable]
		if !present && vd.DefaultValue != nil {
			v, _ := coerceLiteral(sch, vd.DefaultValue, vd.Type, nil)
			vars[vd.Variable] = v
			continue
		}
		if !present && !vd.Type.NonNull {
			continue
		}
		v, problem := coerceJSON(sch, x, vd.Type)
		if problem != "" {
			errs = append(errs, &gqlError{
				Message:    fmt.Sprintf("Variable $%s of type %s was provided invalid value", vd.Variable, vd.Type),
				Locations:  []pos{posOf(vd.Position)},
				Extensions: []kv{{"value", x}, {"problems", []any{[]kv{{"path", []any{}}, {"explanation", problem}}}}},
			})
			continue
		}
		vars[vd.Variable] = v
	}
	return vars, errs
}

// coerceJSON converts one JSON value to an input type; the second result explains a failure.
func coerceJSON(sch *ast.Schema, x any, t *ast.Type) (any, string) {
	if x == nil {
		if t.NonNull {
			return nil, "Expected value to not be null"
		}
		return nil, ""
	}
	if t.Elem != nil {
		arr, ok := x.([]any)
		if !ok {
			v, p := coerceJSON(sch, x, t.Elem)
			return []any{v}, p
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			v, p := coerceJSON(sch, e, t.Elem)
			if p != "" {
				return nil, p
			}
			out[i] = v
		}
		return out, ""
	}
	bad := fmt.Sprintf("Could not coerce value %s to %s", jsonText(x), t.NamedType)
	switch t.NamedType {
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
		if et := namedType(sch, t.NamedType); et != nil && et.Kind == ast.Enum {
			if s, ok := x.(string); ok && et.EnumValues.ForName(s) != nil {
				return s, ""
			}
			return nil, fmt.Sprintf("Expected %s to be one of: %s", jsonText(x), t.NamedType)
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

// literal prints a value as GraphQL source the way graphql-ruby's messages quote it.
func literal(v *ast.Value) string {
	switch v.Kind {
	case ast.Variable:
		return "$" + v.Raw
	case ast.StringValue, ast.BlockValue:
		return strconv.Quote(v.Raw)
	case ast.ListValue, ast.ObjectValue:
		parts := make([]string, len(v.Children))
		for i, c := range v.Children {
			parts[i] = literal(c.Value)
			if v.Kind == ast.ObjectValue {
				parts[i] = c.Name + ": " + parts[i]
			}
		}
		if v.Kind == ast.ListValue {
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.Raw
}

func nullableType(t *ast.Type) *ast.Type {
	c := *t
	c.NonNull = false
	return &c
}

// varCompatible implements "All Variable Usages Are Allowed": "" when allowed, else the kind of
// mismatch as graphql-ruby words it.
func varCompatible(vt, lt *ast.Type, hasDefault bool) string {
	if lt.NonNull && !vt.NonNull {
		if !hasDefault {
			return "Nullability mismatch"
		}
		lt = nullableType(lt)
	}
	return typesCompatible(vt, lt)
}

func typesCompatible(vt, lt *ast.Type) string {
	switch {
	case lt.NonNull && !vt.NonNull:
		return "Nullability mismatch"
	case lt.NonNull:
		return typesCompatible(nullableType(vt), nullableType(lt))
	case vt.NonNull:
		return typesCompatible(nullableType(vt), lt)
	case (lt.Elem == nil) != (vt.Elem == nil):
		return "List dimension mismatch"
	case lt.Elem != nil:
		return typesCompatible(vt.Elem, lt.Elem)
	case vt.NamedType != lt.NamedType:
		return "Type mismatch"
	}
	return ""
}

var booleanType, nonNullBoolean = ast.NamedType("Boolean", nil), ast.NonNullNamedType("Boolean", nil)

// coerceLiteral turns a literal (variables resolved from vars) into a Go value for a named or list
// input type: int, float64, string, bool, time.Time, []any or nil.
func coerceLiteral(sch *ast.Schema, val *ast.Value, t *ast.Type, vars map[string]any) (any, bool) {
	switch val.Kind {
	case ast.Variable:
		if x := vars[val.Raw]; x != nil {
			return x, true
		}
		return nil, !t.NonNull
	case ast.NullValue:
		return nil, !t.NonNull
	}
	if t.Elem != nil {
		if val.Kind != ast.ListValue {
			x, ok := coerceLiteral(sch, val, t.Elem, vars)
			return []any{x}, ok
		}
		out := make([]any, len(val.Children))
		for i, c := range val.Children {
			x, ok := coerceLiteral(sch, c.Value, t.Elem, vars)
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	}
	str := val.Kind == ast.StringValue || val.Kind == ast.BlockValue
	switch t.NamedType {
	case "Int":
		if val.Kind == ast.IntValue {
			n, err := strconv.ParseInt(val.Raw, 10, 32)
			return int(n), err == nil
		}
	case "Float":
		if val.Kind == ast.IntValue || val.Kind == ast.FloatValue {
			f, err := strconv.ParseFloat(val.Raw, 64)
			return f, err == nil
		}
	case "String", "Decimal", "Url":
		if str {
			return val.Raw, true
		}
	case "ID":
		if str || val.Kind == ast.IntValue {
			return val.Raw, true
		}
	case "Boolean":
		if val.Kind == ast.BooleanValue {
			return val.Raw == "true", true
		}
	case "DateTime":
		if str {
			return parseDateTime(val.Raw)
		}
	default:
		if et := namedType(sch, t.NamedType); et != nil && et.Kind == ast.Enum && val.Kind == ast.EnumValue && et.EnumValues.ForName(val.Raw) != nil {
			return val.Raw, true
		}
	}
	return nil, false
}
