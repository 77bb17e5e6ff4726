package reportingbackfill

import (
	"strings"

	"github.com/revtrack/revtrack/schemas"
)

// SQL of a summary's backfill, built around the view's own SELECT (schemas.Summary). Every query
// binds the month (YYYYMM), then the workspace when the run has one.

// viewExistsQuery counts the tables of the database named as the bound view.
const viewExistsQuery = "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = ?"

// describeQuery describes the output columns of a SELECT without running it.
func describeQuery(sel string) string { return "DESCRIBE TABLE (" + sel + ")" }

// summaryMonthsQuery lists the source's months (YYYYMM) with their row counts, of one workspace
// (bound) when oneWorkspace. It reads the month column only.
func summaryMonthsQuery(s schemas.Summary, oneWorkspace bool) string {
	q := "SELECT toYYYYMM(" + s.Month + ") AS month, count() FROM " + s.Source
	if oneWorkspace {
		q += " WHERE workspace_id = ?"
	}
	return q + " GROUP BY month ORDER BY month"
}

// summaryCondition selects a month of the source (and a workspace's rows of it).
func summaryCondition(s schemas.Summary, oneWorkspace bool) string {
	cond := "toYYYYMM(" + s.Month + ") = ?"
	if oneWorkspace {
		cond += " AND workspace_id = ?"
	}
	return cond
}

// insertSummary summarises a month of the source (one hash bucket of its groups when split, bound
// after the month: the number of buckets, then the bucket) with the view's SELECT. The summary's
// key columns are the source's, so a bucket holds whole groups and the view's HAVING sees every
// row of a group.
func insertSummary(s schemas.Summary, cols []string, oneWorkspace, split bool) string {
	cond := summaryCondition(s, oneWorkspace)
	if split {
		cond += " AND cityHash64(" + strings.Join(s.Key, ", ") + ") % ? = ?"
	}
	return "INSERT INTO " + s.Table + " (" + strings.Join(cols, ", ") + ")\n" + s.SelectWhere(cond)
}

// summaryLackingQuery counts, for a dry run, the rows the view makes of a month and those whose
// key the summary has no row for in that month.
func summaryLackingQuery(s schemas.Summary, oneWorkspace bool) string {
	key := "(" + strings.Join(s.Key, ", ") + ")"
	held := "SELECT " + strings.Join(s.Key, ", ") + " FROM " + s.Table + " WHERE toYYYYMM(" + s.TableMonth + ") = ?"
	if oneWorkspace {
		held += " AND workspace_id = ?"
	}
	return "SELECT count(), countIf(" + key + " NOT IN (" + held + "))\nFROM (" + s.SelectWhere(summaryCondition(s, oneWorkspace)) + ")"
}
