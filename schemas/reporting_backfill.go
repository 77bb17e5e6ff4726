package schemas

import (
	"fmt"
	"regexp"
	"strings"
)

// Copy is a table that a materialized view of the migrations fills with every row inserted into a
// source table: the reporting copies (migration 0011) and the derivation's copies (0012). A view
// sees only inserts made after it exists; the rows a source held before are copied by running the
// view's own SELECT (internal/reportingbackfill, docs/REPORTING_PERFORMANCE.md), so the backfill and
// the view cannot disagree on what a copy holds.
type Copy struct {
	View   string // the materialized view
	Table  string // the copy
	Source string // the table the view reads
	// Select is the view's SELECT as the migration gives it; Filter its WHERE condition, "" when the
	// view copies every row.
	Select, Filter string
	// selectFrom is Select without its WHERE clause.
	selectFrom string
	// Month is the source's monthly partition column (PARTITION BY toYYYYMM(Month)), "" when the
	// source is not partitioned. The copy has a column of the same name and value.
	Month string
	// Key is the copy's sorting key, what identifies one of its rows after de-duplication, and
	// Version its version column ("" when it has none).
	Key     []string
	Version string
	// Bucket is the source's sorting-key column after workspace and app (its row ID), by whose hash
	// a large part of a source is copied in several statements.
	Bucket string
}

// CopyBackfillsTable lists the copies known to hold every row of their source (migration 0012):
// written by a complete backfill, or after the migrations when the source was still empty.
const CopyBackfillsTable = "copy_backfills"

var (
	copyViewRe   = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s+((SELECT .+?\sFROM\s+(\w+))(?:\s+WHERE\s+(.+))?)$`)
	copyTableRe  = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) \(.*\)\s*ENGINE = (\w+)(?:\((\w*)\))?(.*)$`)
	copyMonthRe  = regexp.MustCompile(`PARTITION BY toYYYYMM\((\w+)\)`)
	copyOrderRe  = regexp.MustCompile(`ORDER BY (?:\(([^)]*)\)|(\w+))`)
	copyColumnRe = regexp.MustCompile(`^\w+$`)
)

// Copies returns every copy the migrations define, in migration order.
func Copies() ([]Copy, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	type table struct {
		engine, version, month string
		order                  []string
	}
	tables := map[string]table{}
	var out []Copy
	for _, m := range ms {
		for _, st := range m.Statements {
			if t := copyTableRe.FindStringSubmatch(st); t != nil {
				tb := table{engine: t[2], version: t[3]}
				if p := copyMonthRe.FindStringSubmatch(t[4]); p != nil {
					tb.month = p[1]
				}
				if o := copyOrderRe.FindStringSubmatch(t[4]); o != nil {
					for _, c := range strings.Split(o[1]+o[2], ",") {
						tb.order = append(tb.order, strings.TrimSpace(c))
					}
				}
				tables[t[1]] = tb
				continue
			}
			v := copyViewRe.FindStringSubmatch(st)
			if v == nil {
				continue
			}
			c := Copy{View: v[1], Table: v[2], Select: v[3], selectFrom: v[4], Source: v[5], Filter: strings.TrimSpace(v[6])}
			dst, ok := tables[c.Table]
			src, ok2 := tables[c.Source]
			switch {
			case !ok || !ok2:
				return nil, fmt.Errorf("view %s: tables %s and %s must be created by earlier statements", c.View, c.Table, c.Source)
			case dst.engine != "ReplacingMergeTree":
				// Re-inserting a row is harmless only where copies of a row collapse into one.
				return nil, fmt.Errorf("view %s: copy %s is a %s, want a ReplacingMergeTree", c.View, c.Table, dst.engine)
			case len(src.order) < 3 || src.order[0] != "workspace_id" || src.order[1] != "app_id":
				return nil, fmt.Errorf("view %s: source %s must be ordered by (workspace_id, app_id, id, …)", c.View, c.Source)
			}
			c.Month, c.Bucket, c.Key, c.Version = src.month, src.order[2], dst.order, dst.version
			for _, k := range append([]string{c.Month, c.Bucket, c.Version}, c.Key...) {
				if k != "" && !copyColumnRe.MatchString(k) {
					return nil, fmt.Errorf("view %s: key %q is not a column", c.View, k)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// SelectWhere is the view's SELECT restricted by cond, a condition on the source's columns.
func (c Copy) SelectWhere(cond string) string {
	if c.Filter == "" {
		return c.selectFrom + "\nWHERE " + cond
	}
	return c.selectFrom + "\nWHERE (" + c.Filter + ") AND " + cond
}
