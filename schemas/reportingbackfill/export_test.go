package reportingbackfill

import (
	"fmt"
	"strings"

	"github.com/revtrack/revtrack/schemas"
)

// Statements are the queries a run sends for one copy whose view gives cols, with example
// arguments bound: listing the parts of one workspace, comparing a part, copying a part in one
// statement and in several.
func Statements(c schemas.Copy, cols []string) []string {
	p := part{workspaceID: "ws", appID: "app", month: 202501, rows: 10}
	if c.Month == "" {
		p.month = 0
	}
	return []string{
		bind(partsQuery(c, true), "ws"),
		bind(checkQuery(c), checkArgs(c, p)...),
		bind(insertLacking(c, cols, false), insertArgs(c, p, 1, 0)...),
		bind(insertLacking(c, cols, true), insertArgs(c, p, 3, 1)...),
	}
}

// bind replaces the placeholders as the driver does, for these arguments.
func bind(q string, args ...any) string {
	for _, a := range args {
		lit := fmt.Sprint(a)
		if s, ok := a.(string); ok {
			lit = "'" + s + "'"
		}
		q = strings.Replace(q, "?", lit, 1)
	}
	return q
}

// SummaryStatements are the queries a run sends for one summary whose view gives cols, with
// example arguments bound: looking for the view, describing its SELECT, listing the months of one workspace, comparing
// a month in a dry run, and summarising a month (of a workspace) in one statement and in several.
func SummaryStatements(s schemas.Summary, cols []string) []string {
	const month = uint32(202501)
	return []string{
		bind(viewExistsQuery, s.View),
		describeQuery(s.Select),
		bind(summaryMonthsQuery(s, true), "ws"),
		bind(summaryLackingQuery(s, false), month, month),
		bind(summaryLackingQuery(s, true), month, "ws", month, "ws"),
		bind(insertSummary(s, cols, false, false), month),
		bind(insertSummary(s, cols, true, true), month, "ws", uint64(3), uint64(1)),
	}
}

// DescribedColumns names the output columns of a view's SELECT, as a run reads them.
var DescribedColumns = describedColumns
