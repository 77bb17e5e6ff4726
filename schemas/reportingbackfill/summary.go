package reportingbackfill

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// summaryTables are the summaries a run fills (schemas.SummaryOf): acquisition_clicks, whose
// rows the upload matcher reads for the click evidence of every browser, and which lacks the
// browsers whose events landed before migration 0015; acquisition_touches, the first touches
// attribution reads, which lacks those landed before 0025.
var summaryTables = []string{"acquisition_clicks", "acquisition_touches"}

// SummaryTables lists the summaries a run fills, which Auto also summarises after the migrations
// when they are not recorded complete: a migration whose only materialized views write these holds
// for rows landed before it once the process that applied it has started.
func SummaryTables() []string { return slices.Clone(summaryTables) }

// SummaryResult is one summary's part of a Result.
type SummaryResult struct {
	Table string
	// Months of the source that hold rows (of the workspace, in a workspace's run); of those,
	// Done were recorded summarised and skipped, Summarised were summarised (or would have been,
	// in a dry run).
	Months, Done, Summarised int
	// Rows is how many source rows the months summarised hold.
	Rows uint64
	// Groups and Lacking, in a dry run: the rows the view makes of the months to summarise, and
	// how many of those the summary holds none of (rows it holds may still lack older events).
	Groups, Lacking uint64
	// Recorded says the summary is recorded complete in schemas.CopyBackfillsTable.
	Recorded bool
}

// A month is recorded summarised once its INSERT … SELECT succeeded. The view existed by then
// (backfillSummary checks), so every row of the month is in the summary: those the SELECT read,
// and those inserted later, which the view summarised. Nothing but retention removes rows from a
// summary, and it drops a month of the source with the month of the summary, so a record stays
// true, and skipping a recorded month is exact for one read of a small table. Once every month is
// recorded the summary is recorded complete under its own name and later runs read nothing else.

// monthRecord names a summarised month (of one workspace, when workspaceID is set) in
// schemas.CopyBackfillsTable.
func monthRecord(table string, month uint32, workspaceID string) string {
	r := fmt.Sprintf("%s %d-%02d", table, month/100, month%100)
	if workspaceID != "" {
		r += " " + workspaceID
	}
	return r
}

// sourceMonth is one month of a summary's source.
type sourceMonth struct {
	month uint32 // YYYYMM
	rows  uint64 // source rows, of the workspace in a workspace's run
}

// backfillSummary summarises, with the view's SELECT, every month of the source (of the workspace,
// when opts has one) not recorded summarised, and records each, then the summary.
func backfillSummary(ctx context.Context, conn Conn, s schemas.Summary, opts Options, out io.Writer) (SummaryResult, error) {
	res := SummaryResult{Table: s.Table}
	start := time.Now()
	recorded, err := Recorded(ctx, conn)
	if err != nil {
		return res, err
	}
	if recorded[s.Table] {
		res.Recorded = true
		fmt.Fprintf(out, "%s: recorded complete in %s, nothing to summarise\n", s.Table, schemas.CopyBackfillsTable)
		return res, nil
	}
	var views uint64
	if err := conn.QueryRow(ctx, viewExistsQuery, s.View).Scan(&views); err != nil {
		return res, fmt.Errorf("look for %s: %w", s.View, err)
	}
	if views == 0 {
		// Without the view, rows landing after this run would be missing from a month recorded
		// complete.
		return res, fmt.Errorf("the materialized view %s does not exist: run the migrations first", s.View)
	}
	cols, err := describedColumns(ctx, conn, s.Select)
	if err != nil {
		return res, err
	}
	months, err := summaryMonths(ctx, conn, s, opts.WorkspaceID)
	if err != nil {
		return res, err
	}
	res.Months = len(months)
	fmt.Fprintf(out, "%s: %d months of %s\n", s.Table, len(months), s.Source)
	label := s.Table
	if opts.WorkspaceID != "" {
		label += " " + opts.WorkspaceID
	}
	for _, m := range months {
		if recorded[monthRecord(s.Table, m.month, "")] || (opts.WorkspaceID != "" && recorded[monthRecord(s.Table, m.month, opts.WorkspaceID)]) {
			res.Done++
			continue
		}
		res.Summarised++
		res.Rows += m.rows
		ym := fmt.Sprintf("%d-%02d", m.month/100, m.month%100)
		if opts.DryRun {
			var groups, lacking uint64
			args := summaryArgs(m.month, opts.WorkspaceID)
			if err := conn.QueryRow(ctx, summaryLackingQuery(s, opts.WorkspaceID != ""), append(args, args...)...).Scan(&groups, &lacking); err != nil {
				return res, fmt.Errorf("compare %s %s with %s: %w", s.Table, ym, s.Source, err)
			}
			res.Groups += groups
			res.Lacking += lacking
			fmt.Fprintf(out, "%s %s: lacks %d of %d rows (%d rows of %s to summarise)\n", label, ym, lacking, groups, m.rows, s.Source)
			continue
		}
		t0 := time.Now()
		statements := max(1, (m.rows+opts.ChunkRows-1)/opts.ChunkRows)
		for b := range statements {
			args := summaryArgs(m.month, opts.WorkspaceID)
			if statements > 1 {
				args = append(args, statements, b)
			}
			if err := conn.Exec(ctx, insertSummary(s, cols, opts.WorkspaceID != "", statements > 1), args...); err != nil {
				return res, fmt.Errorf("summarise %s %s: %w", s.Source, ym, err)
			}
		}
		if err := record(ctx, conn, monthRecord(s.Table, m.month, opts.WorkspaceID)); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "%s %s: summarised %d rows of %s in %s\n", label, ym, m.rows, s.Source, time.Since(t0).Round(time.Millisecond))
	}
	if !opts.DryRun && opts.WorkspaceID == "" {
		if err := record(ctx, conn, s.Table); err != nil {
			return res, err
		}
		res.Recorded = true
	}
	verb := "summarised"
	if opts.DryRun {
		verb = "to summarise"
	}
	fmt.Fprintf(out, "%s: %d months, %d done before, %d %s (%d rows of %s); %s\n", s.Table, res.Months, res.Done,
		res.Summarised, verb, res.Rows, s.Source, time.Since(start).Round(time.Millisecond))
	return res, nil
}

// wantedSummaries returns the summaries opts selects.
func wantedSummaries(opts Options) ([]schemas.Summary, error) {
	var out []schemas.Summary
	for _, t := range summaryTables {
		if len(opts.Tables) > 0 && !slices.Contains(opts.Tables, t) {
			continue
		}
		s, err := schemas.SummaryOf(t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// summaryMonths lists the months of the summary's source with their row counts.
func summaryMonths(ctx context.Context, conn Conn, s schemas.Summary, workspaceID string) ([]sourceMonth, error) {
	var args []any
	if workspaceID != "" {
		args = append(args, workspaceID)
	}
	rows, err := conn.Query(ctx, summaryMonthsQuery(s, workspaceID != ""), args...)
	if err != nil {
		return nil, fmt.Errorf("list the months of %s: %w", s.Source, err)
	}
	defer rows.Close()
	var out []sourceMonth
	for rows.Next() {
		var m sourceMonth
		if err := rows.Scan(&m.month, &m.rows); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// describedColumns names the output columns of a view's SELECT as DESCRIBE gives them: the
// driver decodes no aggregate-function state, not even in the header of an empty result.
func describedColumns(ctx context.Context, conn Conn, viewSelect string) ([]string, error) {
	rows, err := conn.Query(ctx, describeQuery(viewSelect))
	if err != nil {
		return nil, fmt.Errorf("describe the view's SELECT: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		// DESCRIBE's columns differ between versions; the first is the name.
		dest := make([]any, len(rows.ColumnTypes()))
		for i, ct := range rows.ColumnTypes() {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		name, ok := dest[0].(*string)
		if !ok {
			return nil, fmt.Errorf("describe the view's SELECT: a name of type %T", dest[0])
		}
		out = append(out, *name)
	}
	return out, rows.Err()
}

func summaryArgs(month uint32, workspaceID string) []any {
	if workspaceID == "" {
		return []any{month}
	}
	return []any{month, workspaceID}
}
