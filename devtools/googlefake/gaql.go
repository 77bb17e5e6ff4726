package googlefake

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A GAQL stub: SELECT fields of one resource FROM it, optional WHERE conditions joined by AND
// (=, !=, <, <=, >, >=, IN, NOT IN), ORDER BY and LIMIT. Enough for the discovery queries, strict
// enough to reject a misspelt field the way Google does.

type gaqlKind int

const (
	gStr gaqlKind = iota
	gEnum
	gInt64
	gBool
)

type gaqlValue struct {
	kind gaqlKind
	s    string
	b    bool
}

func strVal(s string) gaqlValue   { return gaqlValue{kind: gStr, s: s} }
func enumVal(s string) gaqlValue  { return gaqlValue{kind: gEnum, s: s} }
func int64Val(s string) gaqlValue { return gaqlValue{kind: gInt64, s: s} }
func boolVal(b bool) gaqlValue    { return gaqlValue{kind: gBool, b: b, s: strconv.FormatBool(b)} }

type gaqlRow map[string]gaqlValue

// gaqlFields are the selectable fields of each resource the stub serves.
var gaqlFields = map[string][]string{
	"conversion_action": {"resource_name", "id", "name", "status", "type", "category", "owner_customer"},
	"customer_client":   {"resource_name", "id", "descriptive_name", "manager", "level", "status", "client_customer"},
	"customer":          {"resource_name", "id", "descriptive_name", "manager", "status", "conversion_tracking_setting.google_ads_conversion_customer"},
}

type gaqlError struct{ code, message string }

func (e *gaqlError) Error() string { return e.message }

type gaqlCond struct {
	field, op string
	values    []string
}

type gaqlOrder struct {
	field string
	desc  bool
}

type gaqlQuery struct {
	resource string
	fields   []string
	where    []gaqlCond
	order    []gaqlOrder
	limit    int
}

var (
	gaqlRE = regexp.MustCompile(`(?is)^\s*SELECT\s+(.+?)\s+FROM\s+([a-z_]+)` +
		`(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+(.+?))?(?:\s+LIMIT\s+([0-9]+))?\s*$`)
	andRE         = regexp.MustCompile(`(?i)\s+AND\s+`)
	bareLiteralRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	condRE        = regexp.MustCompile(`(?is)^([a-z_.]+)\s*(!=|<=|>=|=|<|>|NOT\s+IN|IN)\s*(.+)$`)
)

func parseGAQL(q string) (*gaqlQuery, *gaqlError) {
	m := gaqlRE.FindStringSubmatch(q)
	if m == nil {
		return nil, &gaqlError{"QUERY_ERROR", "Error in query: unexpected input " + strconv.Quote(truncate(q, 60)) + "."}
	}
	query := &gaqlQuery{resource: m[2]}
	known, ok := gaqlFields[query.resource]
	if !ok {
		return nil, &gaqlError{"BAD_RESOURCE_TYPE_IN_FROM_CLAUSE", "Error in query: unrecognized resource '" + query.resource + "'."}
	}
	checkField := func(f string) *gaqlError {
		sub, ok := strings.CutPrefix(f, query.resource+".")
		if !ok || !slices.Contains(known, sub) {
			return &gaqlError{"UNRECOGNIZED_FIELD", "Error in query: unrecognized field '" + f + "'."}
		}
		return nil
	}
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(f)
		if err := checkField(f); err != nil {
			return nil, err
		}
		query.fields = append(query.fields, f)
	}
	if m[3] != "" {
		for _, part := range andRE.Split(m[3], -1) {
			c := condRE.FindStringSubmatch(strings.TrimSpace(part))
			if c == nil {
				return nil, &gaqlError{"QUERY_ERROR", "Error in query: invalid condition '" + part + "'."}
			}
			if err := checkField(c[1]); err != nil {
				return nil, err
			}
			op := strings.ToUpper(strings.Join(strings.Fields(c[2]), " "))
			vals, err := gaqlLiterals(c[3], op == "IN" || op == "NOT IN")
			if err != nil {
				return nil, err
			}
			query.where = append(query.where, gaqlCond{field: c[1], op: op, values: vals})
		}
	}
	if m[4] != "" {
		for _, part := range strings.Split(m[4], ",") {
			w := strings.Fields(part)
			if len(w) == 0 || len(w) > 2 || (len(w) == 2 && !strings.EqualFold(w[1], "ASC") && !strings.EqualFold(w[1], "DESC")) {
				return nil, &gaqlError{"QUERY_ERROR", "Error in query: invalid ORDER BY '" + part + "'."}
			}
			if err := checkField(w[0]); err != nil {
				return nil, err
			}
			query.order = append(query.order, gaqlOrder{field: w[0], desc: len(w) == 2 && strings.EqualFold(w[1], "DESC")})
		}
	}
	if m[5] != "" {
		query.limit, _ = strconv.Atoi(m[5])
	}
	return query, nil
}

// gaqlLiterals reads 'x', "x", 42, TRUE or ENUM_NAME, or a parenthesised list of them.
func gaqlLiterals(s string, list bool) ([]string, *gaqlError) {
	s = strings.TrimSpace(s)
	if list {
		inner, ok := strings.CutPrefix(s, "(")
		if inner, ok2 := strings.CutSuffix(inner, ")"); ok && ok2 {
			var out []string
			for _, item := range strings.Split(inner, ",") {
				v, err := gaqlLiterals(item, false)
				if err != nil {
					return nil, err
				}
				out = append(out, v...)
			}
			return out, nil
		}
		return nil, &gaqlError{"QUERY_ERROR", "Error in query: expected a list after IN."}
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return []string{s[1 : len(s)-1]}, nil
	}
	if bareLiteralRE.MatchString(s) {
		return []string{s}, nil
	}
	return nil, &gaqlError{"QUERY_ERROR", "Error in query: invalid literal " + s + "."}
}

func (q *gaqlQuery) run(rows []gaqlRow) []gaqlRow {
	var out []gaqlRow
	for _, r := range rows {
		if q.matches(r) {
			out = append(out, r)
		}
	}
	if len(q.order) > 0 {
		slices.SortStableFunc(out, func(a, b gaqlRow) int {
			for _, o := range q.order {
				c := compareValues(a[o.field], b[o.field].s)
				if o.desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if q.limit > 0 && len(out) > q.limit {
		out = out[:q.limit]
	}
	return out
}

func (q *gaqlQuery) matches(r gaqlRow) bool {
	for _, c := range q.where {
		v := r[c.field]
		var ok bool
		switch c.op {
		case "IN":
			ok = slices.ContainsFunc(c.values, func(x string) bool { return compareValues(v, x) == 0 })
		case "NOT IN":
			ok = !slices.ContainsFunc(c.values, func(x string) bool { return compareValues(v, x) == 0 })
		default:
			cmpv := compareValues(v, c.values[0])
			ok = map[string]bool{"=": cmpv == 0, "!=": cmpv != 0, "<": cmpv < 0, "<=": cmpv <= 0, ">": cmpv > 0, ">=": cmpv >= 0}[c.op]
		}
		if !ok {
			return false
		}
	}
	return true
}

func compareValues(v gaqlValue, lit string) int {
	switch v.kind {
	case gInt64:
		a, _ := strconv.ParseInt(v.s, 10, 64)
		b, _ := strconv.ParseInt(lit, 10, 64)
		return cmp.Compare(a, b)
	case gBool:
		return cmp.Compare(v.s, strings.ToLower(lit))
	}
	return cmp.Compare(v.s, lit)
}

// render writes a row as the API does: nested lowerCamel objects, int64 as strings, the
// resource's resourceName always included.
func (q *gaqlQuery) render(r gaqlRow) map[string]any {
	obj := map[string]any{}
	put := func(path string) {
		parts := strings.Split(path, ".")
		cur := obj
		for _, p := range parts[:len(parts)-1] {
			key := jsonName(p)
			next, ok := cur[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[key] = next
			}
			cur = next
		}
		v := r[path]
		if v.kind == gBool {
			cur[jsonName(parts[len(parts)-1])] = v.b
		} else {
			cur[jsonName(parts[len(parts)-1])] = v.s
		}
	}
	put(q.resource + ".resource_name")
	for _, f := range q.fields {
		put(f)
	}
	return obj
}

func (q *gaqlQuery) fieldMask() string {
	parts := make([]string, 0, len(q.fields))
	for _, f := range q.fields {
		segs := strings.Split(f, ".")
		for i, s := range segs {
			segs[i] = jsonName(s)
		}
		parts = append(parts, strings.Join(segs, "."))
	}
	return strings.Join(parts, ",")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
