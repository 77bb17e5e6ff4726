package schemas

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Copy is a table that a materialized view of the migrations fills with every row inserted into a
// source table: the reporting copies (migration 0011) and the derivation's copies (0012). A view
// sees only inserts made after it exists; the rows a source held before are copied by running the
// view's own SELECT (schemas/reportingbackfill, docs/REPORTING_PERFORMANCE.md), so the backfill and
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

// CopyBackfillsTable lists the copies and summaries known to hold every row of their source
// (migration 0012): written by a complete backfill, or after the migrations when the source was
// still empty. A summary's months are listed too, as "<summary> YYYY-MM" (and "<summary> YYYY-MM
// <workspace ID>" for one workspace's rows), once summarised.
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

// Summary is a table that a materialized view of the migrations fills with aggregate-function
// states of a source table's rows, one row per group and month (acquisition_clicks, migration
// 0015), or with a versioned row of plain values per group and month (acquisition_touches, 0025). Like a copy, it lacks the rows its source held before the view existed, and they are
// summarised by running the view's own SELECT, one month of the source at a time
// (schemas/reportingbackfill). States of a row inserted twice merge into what one insert gives
// only for some functions, which SummaryOf checks.
type Summary struct {
	View   string // the materialized view
	Table  string // the summary, an AggregatingMergeTree
	Source string // the table the view reads
	// Select is the view's SELECT as the migration gives it.
	Select string
	// Month is the source's monthly partition column (PARTITION BY toYYYYMM(Month)); TableMonth the
	// summary's, which the view sets to toStartOfMonth(Month), so a month of one is a month of the
	// other.
	Month, TableMonth string
	// Key is the summary's sorting key: with its month, what identifies one of its rows. Its
	// columns are the source's, passed through the view unchanged.
	Key []string
	// Keep is a condition on one source row: a group is kept by the view's HAVING max(Keep) = 1
	// when one of its rows meets it; "1" when the view keeps every group.
	Keep string
	// head is the SELECT up to its FROM clause, filter its WHERE condition ("" for none), tail
	// its GROUP BY clause and what follows.
	head, filter, tail string
}

// Aggregate functions whose states merge to the same value however often a row is added.
var idempotentStates = map[string]bool{"argMin": true, "argMax": true, "min": true, "max": true, "uniqExact": true}

var (
	summaryViewRe  = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s+(SELECT\s.+?\sFROM\s+(\w+))(?:\s+WHERE\s+(.+?))?\s+(GROUP BY .+?)(?:\s+HAVING\s+(.+))?$`)
	summaryStateRe = regexp.MustCompile(`(\w+)State\(`)
	summaryKeepRe  = regexp.MustCompile(`(?s)^max\((.+)\) = 1$`)
)

// SummaryOf returns the summary the migrations define for table.
func SummaryOf(table string) (Summary, error) {
	ms, err := Migrations()
	if err != nil {
		return Summary{}, err
	}
	tables := map[string]string{} // CREATE TABLE statements by name
	for _, m := range ms {
		for _, st := range m.Statements {
			if t := copyTableRe.FindStringSubmatch(st); t != nil {
				tables[t[1]] = st
				continue
			}
			v := summaryViewRe.FindStringSubmatchIndex(st)
			if v == nil || st[v[4]:v[5]] != table {
				continue
			}
			group := func(i int) string {
				if v[2*i] < 0 {
					return ""
				}
				return st[v[2*i]:v[2*i+1]]
			}
			s := Summary{View: group(1), Table: table, Source: group(4), Select: st[v[6]:], Keep: "1",
				head: group(3), filter: strings.TrimSpace(group(5)), tail: st[v[12]:]}
			return s, s.complete(tables[s.Table], tables[s.Source], group(7))
		}
	}
	return Summary{}, fmt.Errorf("no materialized view of the migrations writes %s", table)
}

// complete reads the rest of the summary from its table's and its source's CREATE TABLE and the
// view's HAVING condition, and checks that re-inserting a summarised row is harmless.
func (s *Summary) complete(table, source, having string) error {
	dst := copyTableRe.FindStringSubmatch(table)
	src := copyTableRe.FindStringSubmatch(source)
	if dst == nil || src == nil {
		return fmt.Errorf("view %s: tables %s and %s must be created by earlier statements", s.View, s.Table, s.Source)
	}
	states := summaryStateRe.FindAllStringSubmatch(s.Select, -1)
	switch {
	case dst[2] == "AggregatingMergeTree":
	case dst[2] == "ReplacingMergeTree" && len(states) == 0 && dst[3] != "":
		// Plain values per group (acquisition_touches): a group summarised twice gives the same row
		// with the same version, and the version keeps the row the view would have kept.
	default:
		return fmt.Errorf("view %s: summary %s is a %s, want an AggregatingMergeTree or a versioned ReplacingMergeTree of plain values",
			s.View, s.Table, dst[2])
	}
	for _, f := range states {
		if !idempotentStates[f[1]] {
			// A backfill may add a row the view added already: only these merge it away.
			return fmt.Errorf("view %s: %sState counts a row added twice", s.View, f[1])
		}
	}
	if p := copyMonthRe.FindStringSubmatch(src[4]); p != nil {
		s.Month = p[1]
	}
	if p := copyMonthRe.FindStringSubmatch(dst[4]); p != nil {
		s.TableMonth = p[1]
	}
	if o := copyOrderRe.FindStringSubmatch(dst[4]); o != nil {
		for _, c := range strings.Split(o[1]+o[2], ",") {
			s.Key = append(s.Key, strings.TrimSpace(c))
		}
	}
	if s.Month == "" || s.TableMonth == "" || !slices.Contains(s.Key, "workspace_id") ||
		!strings.Contains(s.Select, "toStartOfMonth("+s.Month+") AS "+s.TableMonth) {
		return fmt.Errorf("view %s: source %s and summary %s must be partitioned by month, the summary's month toStartOfMonth of the source's, and the summary keyed by workspace_id",
			s.View, s.Source, s.Table)
	}
	for _, k := range append([]string{s.Month, s.TableMonth}, s.Key...) {
		if !copyColumnRe.MatchString(k) {
			return fmt.Errorf("view %s: key %q is not a column", s.View, k)
		}
	}
	if having = strings.TrimSpace(having); having != "" {
		k := summaryKeepRe.FindStringSubmatch(having)
		if k == nil {
			return fmt.Errorf("view %s: HAVING %s is not max(<condition on a row>) = 1", s.View, having)
		}
		s.Keep = k[1]
	}
	return nil
}

// SelectWhere is the view's SELECT restricted by cond, a condition on the source's columns.
func (s Summary) SelectWhere(cond string) string {
	if s.filter != "" {
		cond = "(" + s.filter + ") AND " + cond
	}
	return s.head + "\nWHERE " + cond + "\n" + s.tail
}
